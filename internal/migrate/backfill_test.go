package migrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/testctx"
)

// scanDB is a source of n items in pages of `page`, one segment, and
// destinations that leave the first request of every batch unprocessed once
// (DDB-API-02) and can fail after `failAfter` batches.
type scanDB struct {
	DynamoDB
	n, page   int
	mu        sync.Mutex
	written   map[string][]string
	batches   int
	failAfter int
	unproc    map[string]bool
	starts    []int // the first index of every source page read
	generic   bool  // a destination item kept GSI1PK
	scanFail  int   // > 0: a Scan of a page starting at or after this index fails
}

func (f *scanDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	t := &types.TableDescription{TableName: in.TableName, TableArn: aws.String("arn:aws:dynamodb:eu-west-1:1:table/" + aws.ToString(in.TableName)),
		ItemCount: aws.Int64(int64(f.n)),
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS}}}
	if aws.ToString(in.TableName) == "src" {
		t.LatestStreamArn = aws.String("stream")
		t.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	}
	return &dynamodb.DescribeTableOutput{Table: t}, nil
}

func (f *scanDB) Scan(ctx context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	if aws.ToString(in.TableName) != "src" {
		return &dynamodb.ScanOutput{}, nil // destinations are empty
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		fmt.Sscanf(in.ExclusiveStartKey["SK"].(*types.AttributeValueMemberS).Value, "TASK#%05d", &start)
		start++
	}
	f.mu.Lock()
	f.starts = append(f.starts, start)
	fail := f.scanFail > 0 && start >= f.scanFail
	f.mu.Unlock()
	if fail {
		return nil, errors.New("scan reset")
	}
	out := &dynamodb.ScanOutput{}
	for i := start; i < min(start+f.page, f.n); i++ {
		out.Items = append(out.Items, map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TENANT#1"},
			"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("TASK#%05d", i)}, "GSI1PK": &types.AttributeValueMemberS{Value: "x"}})
	}
	if start+f.page < f.n {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"PK": out.Items[len(out.Items)-1]["PK"], "SK": out.Items[len(out.Items)-1]["SK"]}
	}
	return out, nil
}

func (f *scanDB) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAfter > 0 && f.batches >= f.failAfter {
		return nil, errors.New("connection reset")
	}
	f.batches++
	out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}
	for table, reqs := range in.RequestItems {
		for i, r := range reqs {
			sk := r.PutRequest.Item["SK"].(*types.AttributeValueMemberS).Value
			if i == 0 && !f.unproc[sk] {
				f.unproc[sk] = true
				out.UnprocessedItems[table] = append(out.UnprocessedItems[table], r)
				continue
			}
			if _, ok := r.PutRequest.Item["GSI1PK"]; ok {
				f.generic = true
			}
			f.written[table] = append(f.written[table], sk)
		}
	}
	return out, nil
}

func newOneShard() *fakeStream {
	return &fakeStream{shards: []stypes.Shard{{ShardId: aws.String("s1"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}}}
}

// A failed backfill resumes from its checkpoint: pages before it are not
// read again, pages after it are, every item ends written (at least once),
// unprocessed items are retried.
func TestBackfillResumesFromCheckpoint(t *testing.T) {
	db := &scanDB{n: 230, page: 40, written: map[string][]string{}, unproc: map[string]bool{}, failAfter: 5}
	c := Clients{DB: db, Streams: newOneShard()}
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: 1,
		Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}
	_, err := Backfill(testctx.Bounded(t), c, o, st)
	require.ErrorContains(t, err, "connection reset")
	loaded, err := LoadState(st.Path())
	require.NoError(t, err)
	require.NotNil(t, loaded.Position)
	assert.Equal(t, []string{"s1"}, loaded.Position.Shards)
	seg := loaded.Backfill.Segments[0]
	assert.False(t, seg.Done)
	assert.Positive(t, seg.Read)
	assert.Less(t, seg.Read, int64(230))
	assert.Contains(t, seg.LastKey, fmt.Sprintf("TASK#%05d", seg.Read-1), "the checkpoint is the last key of the last fully written page")

	db.failAfter, db.starts = 0, nil
	// The resumed run reports its own rate (what it read over its own
	// time) and the overall one (everything over the time of every run),
	// labelled: it once divided every item read since the start by this
	// run's time.
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }
	firstRun := loaded.Backfill.ActiveSeconds
	assert.Positive(t, firstRun, "a failed run's time is recorded at its checkpoints")
	res, err := Backfill(testctx.Bounded(t), c, o, loaded)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.EqualValues(t, 230, res.Read)
	assert.Equal(t, 230-seg.Read, res.ReadThisRun, "this run read what was past the checkpoint")
	require.Positive(t, res.Seconds)
	assert.InDelta(t, float64(res.ReadThisRun)/res.Seconds, res.ItemsPerSec, 1e-9, "items/s this run")
	assert.InDelta(t, firstRun+res.Seconds, res.ActiveSeconds, 1e-9, "the runs' times add up")
	assert.InDelta(t, 230/res.ActiveSeconds, res.OverallItemsPerSec, 1e-9, "items/s overall")
	got := append([]string{}, db.written["tasks"]...)
	sort.Strings(got)
	uniq := map[string]bool{}
	for _, k := range got {
		uniq[k] = true
	}
	assert.Len(t, uniq, 230, "every item written")
	assert.Equal(t, int(seg.Read), db.starts[0], "the resumed run starts after the checkpoint")
	assert.False(t, db.generic, "routes renamed GSI1PK")
	assert.Equal(t, loaded.Position, st.Position, "a resumed backfill keeps its position")

	// A finished backfill is not run again.
	before := db.batches
	res, err = Backfill(testctx.Bounded(t), c, o, loaded)
	require.NoError(t, err)
	assert.True(t, res.AlreadyDone)
	assert.Equal(t, before, db.batches)
}

func TestCatchUpRefusesUnfinishedBackfill(t *testing.T) {
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	st.Position = &Position{StreamARN: "arn", Time: time.Now()}
	st.Backfill = &BackfillState{Segments: make([]SegmentState, 2)}
	_, err := CatchUpPass(testctx.Bounded(t), Clients{}, CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}}, st)
	assert.True(t, IsInputError(err))
	assert.ErrorContains(t, err, "has not finished")
}

// The shared writers: with any number of writers per segment and a write
// failing at any point, the backfill stops with the error (no writer left
// waiting), its checkpoint never passes an item that was not written, and
// a resumed run writes every item (DDB-API-02: unprocessed items retried).
func TestBackfillSharedWritersCheckpointOnlyWrittenPages_DDB_API_02(t *testing.T) {
	for _, tc := range []struct {
		writers, page, failAfter int
	}{{1, 40, 3}, {3, 40, 7}, {8, 17, 2}, {8, 100, 5}, {64, 7, 30}, {2, 230, 4}} {
		t.Run(fmt.Sprintf("writers=%d page=%d fail after %d batches", tc.writers, tc.page, tc.failAfter), func(t *testing.T) {
			db := &scanDB{n: 230, page: tc.page, written: map[string][]string{}, unproc: map[string]bool{}, failAfter: tc.failAfter}
			c := Clients{DB: db, Streams: newOneShard()}
			st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
			o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: tc.writers,
				Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}
			_, err := Backfill(testctx.Bounded(t), c, o, st)
			require.ErrorContains(t, err, "connection reset")
			loaded, err := LoadState(st.Path())
			require.NoError(t, err)
			seg := loaded.Backfill.Segments[0]
			written := map[string]bool{}
			for _, k := range db.written["tasks"] {
				written[k] = true
			}
			for i := 0; i < int(seg.Read); i++ {
				assert.True(t, written[fmt.Sprintf("TASK#%05d", i)], "item %d is before the checkpoint (%d read) but was not written", i, seg.Read)
			}
			db.failAfter = 0
			res, err := Backfill(testctx.Bounded(t), c, o, loaded)
			require.NoError(t, err)
			assert.EqualValues(t, 230, res.Read)
			for _, k := range db.written["tasks"] {
				written[k] = true
			}
			assert.Len(t, written, 230, "every item written after the resume")
		})
	}
}

// A Scan failing while the previous page's batches are still being handed
// to the writers stops the backfill with the scan's error (no send on a
// closed queue, no writer left waiting), and the resumed run finishes.
func TestBackfillScanFailsWhileWriting(t *testing.T) {
	for _, writers := range []int{1, 2, 8} {
		db := &scanDB{n: 230, page: 50, written: map[string][]string{}, unproc: map[string]bool{}, scanFail: 100}
		c := Clients{DB: db, Streams: newOneShard()}
		st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
		o := BackfillOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: 1, Writers: writers,
			Backoff: repair.Backoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}}
		_, err := Backfill(testctx.Bounded(t), c, o, st)
		require.ErrorContains(t, err, "scan reset")
		loaded, err := LoadState(st.Path())
		require.NoError(t, err)
		assert.LessOrEqual(t, loaded.Backfill.Segments[0].Read, int64(100), "the checkpoint stops before the page that failed")
		db.scanFail = 0
		res, err := Backfill(testctx.Bounded(t), c, o, loaded)
		require.NoError(t, err)
		assert.EqualValues(t, 230, res.Read)
	}
}
