package migrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/testctx"
)

// scanLog is scanDB recording the source's Scan requests; its destinations
// answer Scan with destPage (nil: empty).
type scanLog struct {
	*scanDB
	mu       sync.Mutex
	scans    []dynamodb.ScanInput
	destPage func(table string, calls int) (*dynamodb.ScanOutput, error)
	dest     map[string]int // Scan calls per destination
}

func (f *scanLog) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	if aws.ToString(in.TableName) != "src" {
		f.dest[aws.ToString(in.TableName)]++
		n := f.dest[aws.ToString(in.TableName)]
		f.mu.Unlock()
		if n > 1000 {
			return nil, errors.New("scanned the destination 1000 times: the emptiness check does not stop")
		}
		if f.destPage != nil {
			return f.destPage(aws.ToString(in.TableName), n)
		}
		return &dynamodb.ScanOutput{}, nil
	}
	f.scans = append(f.scans, *in)
	f.mu.Unlock()
	return f.scanDB.Scan(ctx, in, opts...)
}

func newScanLog(n, page int) *scanLog {
	return &scanLog{scanDB: &scanDB{n: n, page: page, written: map[string][]string{}, unproc: map[string]bool{}}, dest: map[string]int{}}
}

// Unset options take their defaults (4 segments, 2 writers a segment, the
// default backoff that retries unprocessed items, no rate cap, DynamoDB's
// own page size); set ones are kept. Each run ends within its deadline with
// every item written.
func TestBackfillOptionDefaults(t *testing.T) {
	ctx := testctx.Bounded(t) // one minute for all the cases
	for _, tc := range []struct {
		name     string
		o        BackfillOptions
		segments int
		limit    *int32
	}{
		{"all unset", BackfillOptions{}, 4, nil},
		{"one segment, writers unset", BackfillOptions{Segments: 1}, 1, nil},
		{"one segment, one writer", BackfillOptions{Segments: 1, Writers: 1}, 1, nil},
		{"negative segments and writers", BackfillOptions{Segments: -1, Writers: -3}, 4, nil},
		{"three segments, three writers", BackfillOptions{Segments: 3, Writers: 3}, 3, nil},
		{"page limit", BackfillOptions{Segments: 1, PageLimit: 7}, 1, aws.Int32(7)},
		{"page limit 1", BackfillOptions{Segments: 2, PageLimit: 1}, 2, aws.Int32(1)},
		{"rate cap", BackfillOptions{Segments: 1, MaxWritesPerSecond: 100000}, 1, nil},
		{"rate cap 1000, 2 segments", BackfillOptions{Segments: 2, MaxWritesPerSecond: 1000}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newScanLog(30, 40)
			st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
			o := tc.o
			o.Input = Input{Source: "src", Routes: testRoutes(t)}
			// o.Backoff unset: the default one retries the item left unprocessed in every batch.
			res, err := Backfill(ctx, Clients{DB: db, Streams: newOneShard()}, o, st)
			require.NoError(t, err)
			require.Len(t, st.Backfill.Segments, tc.segments)
			require.NotEmpty(t, db.scans)
			for _, in := range db.scans {
				assert.EqualValues(t, tc.segments, aws.ToInt32(in.TotalSegments))
				assert.Equal(t, tc.limit, in.Limit)
			}
			// The fake ignores Segment: every segment reads the 30 items.
			assert.EqualValues(t, 30*tc.segments, res.Read)
			uniq := map[string]bool{}
			for _, k := range db.written["tasks"] {
				uniq[k] = true
			}
			assert.Len(t, uniq, 30)
		})
	}
}

// The rate is items over the run's seconds, 0 when no time passed (not +Inf).
func TestBackfillItemsPerSecond(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, elapsed := range []time.Duration{0, 4 * time.Second, 10 * time.Second} {
		t.Run(elapsed.String(), func(t *testing.T) {
			db := newScanLog(40, 40)
			st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
			calls := 0
			now := func() time.Time { // the first call starts the run
				calls++
				if calls == 1 {
					return t0
				}
				return t0.Add(elapsed)
			}
			res, err := Backfill(testctx.Bounded(t), Clients{DB: db, Streams: newOneShard()},
				BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: 1, Now: now,
					Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}, st)
			require.NoError(t, err)
			assert.EqualValues(t, 40, res.Read)
			assert.Equal(t, elapsed.Seconds(), res.Seconds)
			if elapsed == 0 {
				assert.Zero(t, res.ItemsPerSec)
			} else {
				assert.InDelta(t, 40/elapsed.Seconds(), res.ItemsPerSec, 1e-9)
			}
		})
	}
}

// Progress is reported after every page's checkpoint, with the items read so far.
func TestBackfillReportsProgressEveryPage(t *testing.T) {
	db := newScanLog(100, 30)
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	var done []int64
	o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: 1,
		Backoff:  repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond},
		Progress: func(d, total int64, _ time.Duration) { done = append(done, d); assert.EqualValues(t, 100, total) }}
	_, err := Backfill(testctx.Bounded(t), Clients{DB: db, Streams: newOneShard()}, o, st)
	require.NoError(t, err)
	assert.Equal(t, []int64{30, 60, 90, 100}, done)
}

// --restart over a migration that was cut over (and not rolled back) is
// refused before anything is read or written; otherwise it starts anew.
func TestBackfillRestartAfterCutover(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		catchUp bool
		cutover *CutoverState
		refused bool
	}{
		{"cut over", true, &CutoverState{CutAt: &at}, true},
		{"cut over and rolled back", true, &CutoverState{CutAt: &at, RolledBackAt: &at}, false},
		{"fenced, not cut", true, &CutoverState{FencedAt: &at}, false},
		{"caught up, no cutover", true, nil, false},
		{"backfilled only", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newScanLog(30, 40)
			st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
			done := at
			st.Position = &Position{StreamARN: "old", Time: at}
			st.Backfill = &BackfillState{Finished: &done, Segments: []SegmentState{{Done: true}}}
			if tc.catchUp {
				st.CatchUp = &CatchUpState{Shards: map[string]ShardState{}}
			}
			st.Cutover = tc.cutover
			o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Restart: true, Segments: 1, Writers: 1,
				Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}
			res, err := Backfill(testctx.Bounded(t), Clients{DB: db, Streams: newOneShard()}, o, st)
			if tc.refused {
				require.True(t, IsInputError(err), "%v", err)
				assert.ErrorContains(t, err, "has been cut over")
				assert.Empty(t, db.scans)
				assert.Zero(t, db.batches)
				assert.Equal(t, "old", st.Position.StreamARN)
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, 30, res.Read)
			assert.Nil(t, st.CatchUp)
			assert.Nil(t, st.Cutover)
			assert.Equal(t, "stream", st.Position.StreamARN)
		})
	}
}

// A new backfill starts from empty destinations only: a destination with an
// item, or whose emptiness cannot be shown in 100 pages (fail closed), is
// refused; an emptiness check that fails stops the run.
func TestBackfillRefusesDestinationsNotShownEmpty(t *testing.T) {
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TENANT#1"}, "SK": &types.AttributeValueMemberS{Value: "TASK#1"}}
	more := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TENANT#1"}, "SK": &types.AttributeValueMemberS{Value: "TASK#0"}}
	for _, tc := range []struct {
		name    string
		page    func(table string, n int) (*dynamodb.ScanOutput, error)
		problem string // "" : accepted
		err     string
		calls   int // Scan calls on "tasks"
	}{
		{"empty", nil, "", "", 1},
		{"an item", func(string, int) (*dynamodb.ScanOutput, error) {
			return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{item}}, nil
		}, "destination tasks is not empty", "", 1},
		{"an item on page 3", func(_ string, n int) (*dynamodb.ScanOutput, error) {
			if n == 3 {
				return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{item}}, nil
			}
			return &dynamodb.ScanOutput{LastEvaluatedKey: more}, nil
		}, "destination tasks is not empty", "", 3},
		{"empty after 99 empty pages", func(_ string, n int) (*dynamodb.ScanOutput, error) {
			if n == 100 {
				return &dynamodb.ScanOutput{}, nil
			}
			return &dynamodb.ScanOutput{LastEvaluatedKey: more}, nil
		}, "", "", 100},
		{"empty pages without end", func(string, int) (*dynamodb.ScanOutput, error) {
			return &dynamodb.ScanOutput{LastEvaluatedKey: more}, nil
		}, "destination tasks is not empty", "", 100},
		{"scan fails", func(string, int) (*dynamodb.ScanOutput, error) {
			return nil, errors.New("access denied")
		}, "", "reading tasks: access denied", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newScanLog(30, 40)
			db.destPage = func(table string, n int) (*dynamodb.ScanOutput, error) {
				if table != "tasks" || tc.page == nil {
					return &dynamodb.ScanOutput{}, nil
				}
				return tc.page(table, n)
			}
			st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
			o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: 1,
				Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}
			res, err := Backfill(testctx.Bounded(t), Clients{DB: db, Streams: newOneShard()}, o, st)
			assert.Equal(t, tc.calls, db.dest["tasks"])
			switch {
			case tc.err != "":
				require.ErrorContains(t, err, tc.err)
				assert.Empty(t, db.scans)
			case tc.problem != "":
				require.True(t, IsInputError(err), "%v", err)
				assert.ErrorContains(t, err, tc.problem)
				assert.Empty(t, db.scans, "nothing read from a refused backfill")
				assert.Zero(t, db.batches)
			default:
				require.NoError(t, err)
				assert.EqualValues(t, 30, res.Read)
			}
		})
	}
}

// pagedStream lists its shards one a page (DescribeStream pages by
// ExclusiveStartShardId, LastEvaluatedShardId set while more remain).
type pagedStream struct {
	*fakeStream
	calls int
}

func (p *pagedStream) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	if p.calls++; p.calls > 100 {
		return nil, errors.New("DescribeStream called 100 times: the listing does not stop")
	}
	i := 0
	if in.ExclusiveStartShardId != nil {
		for j, sh := range p.shards {
			if aws.ToString(sh.ShardId) == aws.ToString(in.ExclusiveStartShardId) {
				i = j + 1
			}
		}
	}
	d := &stypes.StreamDescription{Shards: p.shards[i : i+1]}
	if i+1 < len(p.shards) {
		d.LastEvaluatedShardId = p.shards[i].ShardId
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: d}, nil
}

// The position lists the shards of every DescribeStream page.
func TestRecordPositionReadsEveryShardPage(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fs := &pagedStream{fakeStream: &fakeStream{}}
			var want []string
			for i := range n {
				id := fmt.Sprintf("shardId-%d", i)
				want = append(want, id)
				fs.shards = append(fs.shards, stypes.Shard{ShardId: aws.String(id), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}})
			}
			pos, err := recordPosition(testctx.Bounded(t), fs, "arn", time.Now())
			require.NoError(t, err)
			assert.Equal(t, want, pos.Shards)
			assert.Equal(t, n, fs.calls)
		})
	}
}
