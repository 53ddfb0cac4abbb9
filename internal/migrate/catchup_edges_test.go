package migrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqStream is fakeStream whose iterators honour AFTER_SEQUENCE_NUMBER (as
// DynamoDB Streams does) and whose GetRecords fails past a number of calls,
// so a read that never stops fails instead of hanging.
type seqStream struct {
	*fakeStream
	iterTypes map[string][]stypes.ShardIteratorType
	calls     int
}

func (s *seqStream) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	id := aws.ToString(in.ShardId)
	s.iterTypes[id] = append(s.iterTypes[id], in.ShardIteratorType)
	pos := 0
	if in.ShardIteratorType == stypes.ShardIteratorTypeAfterSequenceNumber {
		pos = -1
		for i, r := range s.records[id] {
			if aws.ToString(r.Dynamodb.SequenceNumber) == aws.ToString(in.SequenceNumber) {
				pos = i + 1
			}
		}
		if pos < 0 {
			return nil, fmt.Errorf("no record %q in shard %s", aws.ToString(in.SequenceNumber), id)
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%d", id, pos))}, nil
}

func (s *seqStream) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if s.calls++; s.calls > 100 {
		return nil, errors.New("GetRecords called 100 times in one test: the read does not stop at the tip")
	}
	return s.fakeStream.GetRecords(ctx, in, opts...)
}

// within runs f and fails the test when it has not returned after a minute:
// a pass that would wait forever fails instead of hanging the suite.
func within[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() { v, err := f(); ch <- result{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(time.Minute):
		t.Fatal("still running after a minute: it waits forever")
		panic("unreachable")
	}
}

func emptyDB() *fakeDB {
	return &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{}}
}

func catchUpState(t *testing.T, pos time.Time, shards ...string) *State {
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	done := pos
	st.Position = &Position{StreamARN: "arn", Time: pos, Shards: shards}
	st.Backfill = &BackfillState{Finished: &done}
	return st
}

// Each pass reads every shard from its own checkpoint: a closed shard read to
// its end is done, an open shard read to its tip is not (its later records
// are read by the next pass, after the last sequence number, not from the
// trim horizon again); the state keeps the newest record seen.
func TestCatchUpPassesResumeAfterEachShardsCheckpoint(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	parent, child := "shardId-1", "shardId-2"
	fs := &seqStream{iterTypes: map[string][]stypes.ShardIteratorType{}, fakeStream: &fakeStream{
		shards: []stypes.Shard{
			{ShardId: aws.String(parent), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("100"), EndingSequenceNumber: aws.String("199")}},
			{ShardId: aws.String(child), ParentShardId: aws.String(parent), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("200")}},
		},
		records: map[string][]stypes.Record{
			parent: {rec(100, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v1", t0.Add(time.Minute))},
			child:  {rec(200, stypes.OperationTypeInsert, "TENANT#1", "TASK#2", "v1", t0.Add(2*time.Minute))},
		},
	}}
	st := catchUpState(t, t0, parent, child)
	db := emptyDB()
	now := t0.Add(time.Hour)
	o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Now: func() time.Time { return now }}
	pass := func() *PassResult {
		t.Helper()
		res, err := within(t, func() (*PassResult, error) {
			return CatchUpPass(testctx.Bounded(t), Clients{DB: db, Streams: fs}, o, st)
		})
		require.NoError(t, err)
		return res
	}

	res := pass()
	assert.EqualValues(t, 2, res.Records)
	assert.True(t, res.CaughtUp)
	assert.True(t, st.CatchUp.Shards[parent].Done, "a closed shard read to its end is done")
	assert.False(t, st.CatchUp.Shards[child].Done, "an open shard read to its tip is not done")
	assert.Equal(t, "200", st.CatchUp.Shards[child].LastSeq)
	require.NotNil(t, st.CatchUp.NewestRecord)
	assert.Equal(t, t0.Add(2*time.Minute), *st.CatchUp.NewestRecord)

	// New records on the open shard: the next pass reads those only.
	fs.records[child] = append(fs.records[child],
		rec(201, stypes.OperationTypeModify, "TENANT#1", "TASK#2", "v2", t0.Add(3*time.Minute)),
		rec(202, stypes.OperationTypeInsert, "TENANT#1", "TASK#3", "v1", t0.Add(4*time.Minute)))
	res = pass()
	assert.EqualValues(t, 2, res.Records, "the second pass reads the two new records only")
	assert.EqualValues(t, 2, res.Put)
	assert.Equal(t, []stypes.ShardIteratorType{stypes.ShardIteratorTypeTrimHorizon, stypes.ShardIteratorTypeAfterSequenceNumber}, fs.iterTypes[child])
	assert.Len(t, fs.iterTypes[parent], 1, "a done shard is not read again")
	assert.Equal(t, "202", st.CatchUp.Shards[child].LastSeq)
	assert.Equal(t, "v2", db.tables["tasks"]["TENANT#1/TASK#2"]["title"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, t0.Add(4*time.Minute), *st.CatchUp.NewestRecord)

	// A pass that reads nothing keeps the newest record seen.
	res = pass()
	assert.Zero(t, res.Records)
	assert.Nil(t, res.NewestRecord)
	require.NotNil(t, st.CatchUp.NewestRecord)
	assert.Equal(t, t0.Add(4*time.Minute), *st.CatchUp.NewestRecord)
	assert.EqualValues(t, 4, st.CatchUp.Applied, "2 puts in each of the first two passes")
}

// Records are skipped as older than the backfill when they predate its
// position by more than the margin (default 1 minute; a margin given is kept).
func TestCatchUpMarginAroundThePosition(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		margin time.Duration
		age    time.Duration // how long before the position the record was written
		skip   bool
	}{
		{0, 30 * time.Second, false}, {0, 59 * time.Second, false}, {0, 61 * time.Second, true}, {0, time.Hour, true},
		{5 * time.Minute, 3 * time.Minute, false}, {5 * time.Minute, 6 * time.Minute, true},
		{10 * time.Second, 30 * time.Second, true}, {10 * time.Second, 5 * time.Second, false},
	} {
		t.Run(fmt.Sprintf("margin %s record %s before", tc.margin, tc.age), func(t *testing.T) {
			fs := &seqStream{iterTypes: map[string][]stypes.ShardIteratorType{}, fakeStream: &fakeStream{
				shards:  []stypes.Shard{{ShardId: aws.String("s"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}},
				records: map[string][]stypes.Record{"s": {rec(1, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v", t0.Add(-tc.age))}}}}
			st := catchUpState(t, t0, "s")
			o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Margin: tc.margin, Now: func() time.Time { return t0.Add(time.Minute) }}
			res, err := CatchUpPass(testctx.Bounded(t), Clients{DB: emptyDB(), Streams: fs}, o, st)
			require.NoError(t, err)
			if tc.skip {
				assert.EqualValues(t, 1, res.BeforeBackfill)
				assert.Zero(t, res.Put)
			} else {
				assert.Zero(t, res.BeforeBackfill)
				assert.EqualValues(t, 1, res.Put)
			}
		})
	}
}

// A position older than the stream's retention is refused for a shard the
// catch-up never read (its early records are gone), not for one it has a
// checkpoint in; a position exactly the retention old is still accepted.
func TestCatchUpRetentionBoundary(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		age     time.Duration
		lastSeq string
		refused bool
	}{
		{24 * time.Hour, "", false}, {24*time.Hour + time.Nanosecond, "", true}, {30 * time.Hour, "", true},
		{30 * time.Hour, "1", false}, {time.Hour, "", false}, {time.Hour, "1", false},
	} {
		t.Run(fmt.Sprintf("age %s checkpoint %q", tc.age, tc.lastSeq), func(t *testing.T) {
			fs := &seqStream{iterTypes: map[string][]stypes.ShardIteratorType{}, fakeStream: &fakeStream{
				shards:  []stypes.Shard{{ShardId: aws.String("s"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}},
				records: map[string][]stypes.Record{"s": {rec(1, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v", t0)}}}}
			st := catchUpState(t, t0, "s")
			st.CatchUp = &CatchUpState{Shards: map[string]ShardState{"s": {LastSeq: tc.lastSeq}}}
			o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Now: func() time.Time { return t0.Add(tc.age) }}
			_, err := CatchUpPass(testctx.Bounded(t), Clients{DB: emptyDB(), Streams: fs}, o, st)
			if tc.refused {
				require.ErrorIs(t, err, ErrTrimmed)
				assert.ErrorContains(t, err, "past the stream's retention")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// Applied counts every write of a pass: puts, deletes and deletes from an
// item's old destination; unmatched keys are sampled (10 at most); a pass
// without unmatched keys succeeds without --allow-unmatched.
func TestCatchUpCountsEveryKindOfWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := t0.Add(time.Minute)
	moved := rec(3, stypes.OperationTypeModify, "TENANT#1", "TASK#9", "", at)
	// A synthetic record whose old image routes elsewhere than its new one.
	moved.Dynamodb.OldImage = map[string]stypes.AttributeValue{"PK": sv("TENANT#1"), "SK": sv("TASK#9")}
	moved.Dynamodb.NewImage = map[string]stypes.AttributeValue{"PK": sv("TENANT#1"), "SK": sv("EMAIL_MESSAGE#9"), "title": sv("moved")}
	recs := []stypes.Record{
		rec(1, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v", at),
		rec(2, stypes.OperationTypeInsert, "TENANT#1", "TASK#2", "v", at),
		rec(4, stypes.OperationTypeRemove, "TENANT#1", "TASK#3", "", at),
		moved,
	}
	fs := &seqStream{iterTypes: map[string][]stypes.ShardIteratorType{}, fakeStream: &fakeStream{
		shards:  []stypes.Shard{{ShardId: aws.String("s"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}},
		records: map[string][]stypes.Record{"s": recs}}}
	item := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TENANT#1"}, "SK": &types.AttributeValueMemberS{Value: sk}}
	}
	db := &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{
		"tasks": {"TENANT#1/TASK#3": item("TASK#3"), "TENANT#1/TASK#9": item("TASK#9")},
	}}
	st := catchUpState(t, t0, "s")
	o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Now: func() time.Time { return at }}
	res, err := within(t, func() (*PassResult, error) {
		return CatchUpPass(testctx.Bounded(t), Clients{DB: db, Streams: fs}, o, st)
	})
	require.NoError(t, err, "no unmatched key: no --allow-unmatched needed")
	assert.EqualValues(t, 3, res.Put)
	assert.EqualValues(t, 1, res.Deleted)
	assert.EqualValues(t, 1, res.MovedAway)
	assert.EqualValues(t, 5, st.CatchUp.Applied)
	assert.NotContains(t, db.tables["tasks"], "TENANT#1/TASK#9", "the moved item left its old destination")
	assert.Contains(t, db.tables["messages"], "TENANT#1/EMAIL_MESSAGE#9")

	for _, n := range []int{1, 9, 10, 11, 25} {
		t.Run(fmt.Sprintf("%d unmatched", n), func(t *testing.T) {
			var junk []stypes.Record
			for i := range n {
				junk = append(junk, rec(100+i, stypes.OperationTypeInsert, "JUNK", fmt.Sprintf("X%02d", i), "", at))
			}
			fs.records["s2"] = junk
			fs.shards = []stypes.Shard{{ShardId: aws.String("s2"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("100")}}}
			fs.calls = 0
			st := catchUpState(t, t0, "s2")
			_, err := CatchUpPass(testctx.Bounded(t), Clients{DB: emptyDB(), Streams: fs}, o, st)
			var ue *UnmatchedError
			require.ErrorAs(t, err, &ue)
			assert.EqualValues(t, n, ue.Count)
			assert.Len(t, ue.Sample, min(n, 10))
			assert.True(t, IsRefused(err), "refused before the pass's first write")
			assert.Zero(t, st.CatchUp.Unmatched, "nothing of the refused pass is recorded")
		})
	}
}

// Unset or negative workers mean the default (8); a pass with any number of
// workers writes every key.
func TestCatchUpWorkers(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, workers := range []int{-1, 0, 1, 3, 16} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			var recs []stypes.Record
			for i := range 20 {
				recs = append(recs, rec(i+1, stypes.OperationTypeInsert, "TENANT#1", fmt.Sprintf("TASK#%02d", i), "v", t0))
			}
			fs := &seqStream{iterTypes: map[string][]stypes.ShardIteratorType{}, fakeStream: &fakeStream{
				shards:  []stypes.Shard{{ShardId: aws.String("s"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}},
				records: map[string][]stypes.Record{"s": recs}}}
			db := emptyDB()
			st := catchUpState(t, t0, "s")
			o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Workers: workers, Now: func() time.Time { return t0 }}
			res, err := within(t, func() (*PassResult, error) {
				return CatchUpPass(testctx.Bounded(t), Clients{DB: db, Streams: fs}, o, st)
			})
			require.NoError(t, err)
			assert.EqualValues(t, 20, res.Put)
			assert.Len(t, db.tables["tasks"], 20)
		})
	}
}
