package migrate

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
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

	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/testctx"
)

// fakeStream is a stream whose shards are listed children first.
type fakeStream struct {
	shards  []stypes.Shard
	records map[string][]stypes.Record
}

func (f *fakeStream) DescribeStream(ctx context.Context, _ *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: &stypes.StreamDescription{Shards: f.shards}}, nil
}

func (f *fakeStream) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(aws.ToString(in.ShardId) + "|0")}, nil
}

func (f *fakeStream) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	var id string
	var pos int
	fmt.Sscanf(aws.ToString(in.ShardIterator), "%s", &id)
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '|' {
			fmt.Sscanf(id[i+1:], "%d", &pos)
			id = id[:i]
			break
		}
	}
	recs := f.records[id]
	if pos >= len(recs) {
		for _, sh := range f.shards {
			if aws.ToString(sh.ShardId) == id && sh.SequenceNumberRange.EndingSequenceNumber != nil {
				return &dynamodbstreams.GetRecordsOutput{}, nil // closed: no next iterator
			}
		}
		return &dynamodbstreams.GetRecordsOutput{NextShardIterator: aws.String(fmt.Sprintf("%s|%d", id, pos))}, nil
	}
	return &dynamodbstreams.GetRecordsOutput{Records: recs[pos:], NextShardIterator: aws.String(fmt.Sprintf("%s|%d", id, len(recs)))}, nil
}

// fakeDB applies puts and deletes with the sequence condition.
type fakeDB struct {
	DynamoDB
	mu     sync.Mutex
	tables map[string]map[string]map[string]types.AttributeValue
}

func keyOf(m map[string]types.AttributeValue) string {
	return m["PK"].(*types.AttributeValueMemberS).Value + "/" + m["SK"].(*types.AttributeValueMemberS).Value
}

func (f *fakeDB) newer(table, k, seq string) bool {
	cur, ok := f.tables[table][k]
	if !ok {
		return true
	}
	s, ok := cur[routes.SeqAttribute]
	return !ok || s.(*types.AttributeValueMemberS).Value < seq
}

func (f *fakeDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := aws.ToString(in.TableName)
	if !f.newer(t, keyOf(in.Item), in.ExpressionAttributeValues[":s"].(*types.AttributeValueMemberS).Value) {
		return nil, &types.ConditionalCheckFailedException{}
	}
	if f.tables[t] == nil {
		f.tables[t] = map[string]map[string]types.AttributeValue{}
	}
	f.tables[t][keyOf(in.Item)] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := aws.ToString(in.TableName)
	if !f.newer(t, keyOf(in.Key), in.ExpressionAttributeValues[":s"].(*types.AttributeValueMemberS).Value) {
		return nil, &types.ConditionalCheckFailedException{}
	}
	delete(f.tables[t], keyOf(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}

func sv(v string) stypes.AttributeValue { return &stypes.AttributeValueMemberS{Value: v} }

func rec(seq int, event stypes.OperationType, pk, sk, title string, at time.Time) stypes.Record {
	keys := map[string]stypes.AttributeValue{"PK": sv(pk), "SK": sv(sk)}
	r := stypes.Record{EventName: event, Dynamodb: &stypes.StreamRecord{Keys: keys, SequenceNumber: aws.String(fmt.Sprint(seq)), ApproximateCreationDateTime: &at}}
	if event != stypes.OperationTypeRemove {
		r.Dynamodb.NewImage = map[string]stypes.AttributeValue{"PK": sv(pk), "SK": sv(sk), "title": sv(title), "GSI1PK": sv("g")}
	}
	return r
}

func testRoutes(t *testing.T) *routes.Routes {
	r, err := routes.Parse("r.yaml", []byte(`version: 1
routes:
  - table: tasks
    match: { PK: "TENANT#*", SK: "TASK#*" }
    rename: { GSI1PK: status_key }
  - table: messages
    match: { PK: "TENANT#*", SK: "EMAIL_MESSAGE#*" }
    drop: [GSI1PK]
`))
	require.NoError(t, err)
	return r
}

// Per-key order holds across a shard split even when DescribeStream lists
// the child first; a moved item leaves its old destination; records before
// the backfill are skipped; unmatched keys are counted.
func TestCatchUpPassOrderAndRoutes(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := t0.Add(time.Minute)
	parent, child := "shardId-1", "shardId-2"
	fs := &fakeStream{
		shards: []stypes.Shard{
			{ShardId: aws.String(child), ParentShardId: aws.String(parent), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("200")}},
			{ShardId: aws.String(parent), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("100"), EndingSequenceNumber: aws.String("199")}},
		},
		records: map[string][]stypes.Record{
			parent: {
				rec(90, stypes.OperationTypeInsert, "TENANT#1", "TASK#old", "before the backfill", t0.Add(-time.Hour)),
				rec(100, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v1", at),
				rec(101, stypes.OperationTypeModify, "TENANT#1", "TASK#2", "v1", at),
				rec(102, stypes.OperationTypeInsert, "JUNK#1", "X", "junk", at),
			},
			child: {
				rec(200, stypes.OperationTypeModify, "TENANT#1", "TASK#1", "v2", at),
				rec(201, stypes.OperationTypeRemove, "TENANT#1", "TASK#2", "", at),
				rec(202, stypes.OperationTypeInsert, "TENANT#1", "EMAIL_MESSAGE#from-TASK#2", "moved", at),
			},
		},
	}
	db := &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{
		"tasks": {"TENANT#1/TASK#2": {"PK": &types.AttributeValueMemberS{Value: "TENANT#1"}, "SK": &types.AttributeValueMemberS{Value: "TASK#2"}}}, // the backfill's copy
	}}
	done := t0.Add(time.Minute)
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	st.Position = &Position{StreamARN: "arn", Time: t0, Shards: []string{parent, child}}
	st.Backfill = &BackfillState{Finished: &done}
	o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, AllowUnmatched: true, Now: func() time.Time { return at.Add(time.Second) }}
	res, err := CatchUpPass(testctx.Bounded(t), Clients{DB: db, Streams: fs}, o, st)
	require.NoError(t, err)
	assert.EqualValues(t, 7, res.Records)
	assert.EqualValues(t, 1, res.BeforeBackfill)
	assert.EqualValues(t, 1, res.Unmatched)
	assert.EqualValues(t, 2, res.Put)
	assert.EqualValues(t, 1, res.Deleted)
	assert.True(t, res.CaughtUp)
	assert.Equal(t, time.Second, res.Lag)

	var tasks, messages []string
	for k := range db.tables["tasks"] {
		tasks = append(tasks, k)
	}
	for k := range db.tables["messages"] {
		messages = append(messages, k)
	}
	sort.Strings(tasks)
	assert.Equal(t, []string{"TENANT#1/TASK#1"}, tasks, "TASK#2 moved away; TASK#old predates the backfill")
	assert.Equal(t, []string{"TENANT#1/EMAIL_MESSAGE#from-TASK#2"}, messages)
	t1 := db.tables["tasks"]["TENANT#1/TASK#1"]
	assert.Equal(t, "v2", t1["title"].(*types.AttributeValueMemberS).Value, "the child's change comes after the parent's")
	assert.Equal(t, PadSeq("200"), t1[routes.SeqAttribute].(*types.AttributeValueMemberS).Value)
	assert.Contains(t, t1, "status_key")
	assert.NotContains(t, db.tables["messages"]["TENANT#1/EMAIL_MESSAGE#from-TASK#2"], "GSI1PK")

	// The checkpoint moved: the parent is done, the child at 202; a second pass reads nothing.
	assert.True(t, st.CatchUp.Shards[parent].Done)
	assert.Equal(t, "202", st.CatchUp.Shards[child].LastSeq)
	fs.records[child] = fs.records[child][:0]
	res, err = CatchUpPass(testctx.Bounded(t), Clients{DB: db, Streams: fs}, o, st)
	require.NoError(t, err)
	assert.Zero(t, res.Records)
	assert.Zero(t, res.Lag)
}

func TestCatchUpRefusesUnmatchedWithoutFlag(t *testing.T) {
	at := time.Now()
	fs := &fakeStream{shards: []stypes.Shard{{ShardId: aws.String("s"), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("1")}}},
		records: map[string][]stypes.Record{"s": {rec(1, stypes.OperationTypeInsert, "JUNK", "X", "", at)}}}
	done := at
	st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
	st.Position = &Position{StreamARN: "arn", Time: at, Shards: []string{"s"}}
	st.Backfill = &BackfillState{Finished: &done}
	_, err := CatchUpPass(testctx.Bounded(t), Clients{DB: &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{}}, Streams: fs},
		CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}}, st)
	require.True(t, IsRefused(err), "refused before the pass's first write: %v", err)
	assert.ErrorContains(t, err, "1 item(s) match no route")
	assert.Empty(t, st.CatchUp.Shards, "the checkpoint did not move")

	// A backfill run with --allow-unmatched decided for the catch-up too.
	st.CatchUp, st.Backfill.AllowUnmatched = nil, true
	res, err := CatchUpPass(testctx.Bounded(t), Clients{DB: &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{}}, Streams: fs},
		CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}}, st)
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Unmatched)
}

func TestPadSeqOrdersAsNumbers(t *testing.T) {
	seqs := []string{"9", "10", "100000000000000000000", "99999999999999999999", "1100000000017454423009"}
	padded := make([]string, len(seqs))
	for i, s := range seqs {
		padded[i] = PadSeq(s)
		assert.Len(t, padded[i], 40)
	}
	sort.Strings(padded)
	assert.Equal(t, []string{PadSeq("9"), PadSeq("10"), PadSeq("99999999999999999999"), PadSeq("100000000000000000000"), PadSeq("1100000000017454423009")}, padded)
}

func TestOrderShardsParentsFirst(t *testing.T) {
	sh := func(id, parent string) shardInfo { return shardInfo{ShardId: aws.String(id), Parent: parent} }
	got := orderShards([]shardInfo{sh("c2", "c1"), sh("c1", "p"), sh("x", "gone"), sh("p", "")})
	var ids []string
	for _, s := range got {
		ids = append(ids, aws.ToString(s.ShardId))
	}
	assert.Equal(t, []string{"p", "c1", "c2", "x"}, ids)
}

func TestStateCheck(t *testing.T) {
	st := NewState("/tmp/x.json", "src", "sum1")
	require.NoError(t, st.Check("src", "sum1"))
	assert.ErrorContains(t, st.Check("other", "sum1"), "not other")
	assert.ErrorContains(t, st.Check("src", "sum2"), "routes file changed")
	_, err := LoadState(filepath.Join(t.TempDir(), "none.json"))
	assert.ErrorIs(t, err, ErrNoState)
}

// TestCatchUpFollowsUntilCancelled: with Follow, CatchUp runs pass after
// pass (summing them, each reported), and the end of its context ends the
// follow without an error; without Follow it runs one pass.
func TestCatchUpFollowsUntilCancelled(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := t0.Add(time.Minute)
	shard := "shardId-1"
	newStream := func() *fakeStream {
		return &fakeStream{
			shards:  []stypes.Shard{{ShardId: aws.String(shard), SequenceNumberRange: &stypes.SequenceNumberRange{StartingSequenceNumber: aws.String("100")}}},
			records: map[string][]stypes.Record{shard: {rec(100, stypes.OperationTypeInsert, "TENANT#1", "TASK#1", "v1", at)}},
		}
	}
	newState := func() *State {
		done := t0.Add(time.Minute)
		st := NewState(filepath.Join(t.TempDir(), "s.json"), "src", "x")
		st.Position = &Position{StreamARN: "arn", Time: t0, Shards: []string{shard}}
		st.Backfill = &BackfillState{Finished: &done}
		return st
	}
	o := CatchUpOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Now: func() time.Time { return at.Add(time.Second) }}

	total, passes, err := CatchUp(testctx.Bounded(t), Clients{DB: &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{}}, Streams: newStream()}, o, newState())
	require.NoError(t, err)
	assert.Equal(t, 1, passes, "without --follow: one pass")
	assert.EqualValues(t, 1, total.Put)

	ctx, cancel := context.WithCancel(testctx.Bounded(t))
	var seen []int
	o.Follow, o.Interval = true, time.Millisecond
	o.OnPass = func(n int, p *PassResult) {
		seen = append(seen, n)
		if n == 3 {
			cancel()
		}
	}
	total, passes, err = CatchUp(ctx, Clients{DB: &fakeDB{tables: map[string]map[string]map[string]types.AttributeValue{}}, Streams: newStream()}, o, newState())
	require.NoError(t, err, "the end of a follow is not an error")
	assert.Equal(t, 3, passes)
	assert.Equal(t, []int{1, 2, 3}, seen)
	assert.EqualValues(t, 1, total.Put, "the record is applied once; later passes read nothing new")
	assert.True(t, total.CaughtUp)
}
