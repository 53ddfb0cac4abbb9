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
