package repair

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
)

// throttlingWriter leaves the last `keep` items of each call unprocessed for
// the first `times` calls, as DynamoDB does when throttled.
type throttlingWriter struct {
	keep, times int
	calls       []int // items per call
}

func (w *throttlingWriter) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	var reqs []types.WriteRequest
	var table string
	for t, r := range in.RequestItems {
		table, reqs = t, r
	}
	w.calls = append(w.calls, len(reqs))
	out := &dynamodb.BatchWriteItemOutput{}
	if len(w.calls) <= w.times && len(reqs) >= w.keep {
		out.UnprocessedItems = map[string][]types.WriteRequest{table: reqs[len(reqs)-w.keep:]}
	}
	return out, nil
}

func puts(n int) []types.WriteRequest {
	reqs := make([]types.WriteRequest, n)
	for i := range reqs {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "1"}}}}
	}
	return reqs
}

var fast = Backoff{Attempts: 5, Base: time.Millisecond, Max: 2 * time.Millisecond}

func TestWriteBatchRetriesUnprocessedItems_DDB_API_02(t *testing.T) {
	w := &throttlingWriter{keep: 10, times: 2}
	require.NoError(t, writeBatch(context.Background(), w, "t", puts(25), fast))
	assert.Equal(t, []int{25, 10, 10}, w.calls, "only the unprocessed items are sent again, until none are left")
}

func TestWriteBatchGivesUpAfterAttempts(t *testing.T) {
	w := &throttlingWriter{keep: 3, times: 100}
	err := writeBatch(context.Background(), w, "t", puts(25), fast)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "3 of 25 item(s) still unprocessed after 5 attempts")
	assert.Len(t, w.calls, 5)
}

func TestWriteBatchStopsOnCancel(t *testing.T) {
	w := &throttlingWriter{keep: 3, times: 100}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := writeBatch(ctx, w, "t", puts(25), Backoff{Attempts: 5, Base: time.Hour, Max: time.Hour})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Len(t, w.calls, 1, "no retry after cancel")
}

type slowReader struct{ calls int }

func (r *slowReader) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.calls++
	ka := in.RequestItems["t"]
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{"t": ka.Keys[:1]}}
	if len(ka.Keys) > 1 {
		out.UnprocessedKeys = map[string]types.KeysAndAttributes{"t": {Keys: ka.Keys[1:], ConsistentRead: ka.ConsistentRead}}
	}
	return out, nil
}

func TestGetBatchRetriesUnprocessedKeys(t *testing.T) {
	r := &slowReader{}
	keys := []map[string]types.AttributeValue{{"id": &types.AttributeValueMemberN{Value: "1"}}, {"id": &types.AttributeValueMemberN{Value: "2"}}, {"id": &types.AttributeValueMemberN{Value: "3"}}}
	items, err := getBatch(context.Background(), r, "t", keys, fast)
	require.NoError(t, err)
	assert.Equal(t, keys, items)
	assert.Equal(t, 3, r.calls)
}

func TestUnchangedConditionUsesPlaceholders_DDB_API_04(t *testing.T) {
	c, err := unchanged(nil, []string{"user_id"})
	require.NoError(t, err)
	assert.Equal(t, "attribute_not_exists(#k0)", c.expr)
	assert.Equal(t, map[string]string{"#k0": "user_id"}, c.names)

	cur := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u1"}, "size": &types.AttributeValueMemberN{Value: "3"}}
	c, err = unchanged(cur, []string{"user_id"})
	require.NoError(t, err)
	assert.Equal(t, "#c0 = :c0 AND #c1 = :c1", c.expr, "reserved words such as size only through placeholders")
	assert.Equal(t, map[string]string{"#c0": "size", "#c1": "user_id"}, c.names)
	assert.Equal(t, cur["size"], c.values[":c0"])

	big := map[string]types.AttributeValue{}
	for i := 0; i < 400; i++ {
		big[fmt.Sprintf("attr%d", i)] = &types.AttributeValueMemberN{Value: "1"}
	}
	_, err = unchanged(big, []string{"user_id"})
	assert.ErrorContains(t, err, "4 KB expression limit")
}

// stuckReader never reads the last key: DynamoDB throttling one key for good.
type stuckReader struct{ calls int }

func (r *stuckReader) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.calls++
	if r.calls > 100 {
		return nil, fmt.Errorf("BatchGetItem called %d times: getBatch does not give up", r.calls)
	}
	ka := in.RequestItems["t"]
	n := len(ka.Keys) - 1
	return &dynamodb.BatchGetItemOutput{
		Responses:       map[string][]map[string]types.AttributeValue{"t": ka.Keys[:n]},
		UnprocessedKeys: map[string]types.KeysAndAttributes{"t": {Keys: ka.Keys[n:], ConsistentRead: ka.ConsistentRead}},
	}, nil
}

// TestGetBatchGivesUpAfterAttempts (DDB-API-02): keys still unprocessed
// after bo.Attempts calls are an error naming the count and the attempts,
// never a short read taken for items gone from the table.
func TestGetBatchGivesUpAfterAttempts(t *testing.T) {
	for _, attempts := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(attempts, " attempts"), func(t *testing.T) {
			r := &stuckReader{}
			keys := []map[string]types.AttributeValue{{"id": &types.AttributeValueMemberN{Value: "1"}}, {"id": &types.AttributeValueMemberN{Value: "2"}}}
			items, err := getBatch(context.Background(), r, "t", keys, Backoff{Attempts: attempts, Base: time.Millisecond, Max: 2 * time.Millisecond})
			require.Error(t, err)
			assert.Nil(t, items)
			assert.Contains(t, err.Error(), fmt.Sprintf("1 key(s) still unprocessed after %d attempts", attempts))
			assert.Equal(t, attempts, r.calls, "one call per attempt")
		})
	}
}

// emptyUnprocessed answers everything, with an UnprocessedKeys entry of no keys.
type emptyUnprocessed struct{ calls int }

func (r *emptyUnprocessed) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.calls++
	ka := in.RequestItems["t"]
	return &dynamodb.BatchGetItemOutput{
		Responses:       map[string][]map[string]types.AttributeValue{"t": ka.Keys},
		UnprocessedKeys: map[string]types.KeysAndAttributes{"t": {}},
	}, nil
}

func TestGetBatchDoneWhenNothingIsLeft(t *testing.T) {
	r := &emptyUnprocessed{}
	keys := []map[string]types.AttributeValue{{"id": &types.AttributeValueMemberN{Value: "1"}}}
	items, err := getBatch(context.Background(), r, "t", keys, Backoff{Attempts: 3, Base: time.Hour, Max: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, keys, items)
	assert.Equal(t, 1, r.calls, "an empty UnprocessedKeys entry is nothing left to read")
}

// TestConflictSampleIsCapped: every conflict is counted, the first 100 are
// kept as a sample (the result stays small whatever the number of conflicts).
func TestConflictSampleIsCapped(t *testing.T) {
	for _, n := range []int{0, 1, conflictSampleSize - 1, conflictSampleSize, conflictSampleSize + 1, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := &runner{res: &Result{ConflictSample: []Conflict{}}}
			for i := n; i > 0; i-- {
				r.conflict(tablediff.KeyRecord{Key: []byte(fmt.Sprintf(`{"id":{"N":"%05d"}}`, i))}, "changed")
			}
			res := r.result()
			assert.Equal(t, int64(n), res.Conflicts)
			require.Len(t, res.ConflictSample, min(n, conflictSampleSize))
			for i := 1; i < len(res.ConflictSample); i++ {
				assert.Less(t, string(res.ConflictSample[i-1].Key), string(res.ConflictSample[i].Key), "sorted by key")
			}
		})
	}
}

// TestUnchangedConditionAtTheLimit: the whole-image condition is refused
// only when its expression passes DynamoDB's 4 KB limit: 240 attributes
// make 4095 characters, 241 make 4113.
func TestUnchangedConditionAtTheLimit(t *testing.T) {
	item := func(n int) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("a%03d", i)] = &types.AttributeValueMemberN{Value: "1"}
		}
		return m
	}
	c, err := unchanged(item(240), []string{"a000"})
	require.NoError(t, err)
	assert.Len(t, c.expr, 4095)
	assert.Len(t, c.names, 240)
	_, err = unchanged(item(241), []string{"a000"})
	assert.ErrorContains(t, err, "too many attributes (241)")
}
