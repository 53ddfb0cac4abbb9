package batchwrite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/batchwrite"
)

// TestSplitPacksEachBatchToTheLimit: for every byte limit in a range and
// several item limits, Split keeps the order, leaves no batch empty, keeps
// each batch under both limits (an item alone may pass the byte limit: the
// service judges it) and closes a batch only when the next item would not
// fit, so the batches are as full as the limits allow.
func TestSplitPacksEachBatchToTheLimit(t *testing.T) {
	var reqs []types.WriteRequest
	for i := 0; i < 12; i++ {
		reqs = append(reqs, put(fmt.Sprint(i), map[string]types.AttributeValue{"s": &types.AttributeValueMemberS{Value: strings.Repeat("x", (i%5)*17)}}))
	}
	one := batchwrite.RequestSize("t", reqs[:1])
	all := batchwrite.RequestSize("t", reqs)
	for _, items := range []int{1, 3, 25} {
		for limit := one - 10; limit <= all+2; limit++ {
			l := batchwrite.Limits{Items: items, Bytes: limit}
			batches := batchwrite.Split("t", reqs, l)
			var got []types.WriteRequest
			for i, b := range batches {
				require.NotEmpty(t, b, "limit %+v: batch %d is empty", l, i)
				got = append(got, b...)
				assert.LessOrEqual(t, len(b), items, "limit %+v", l)
				if len(b) > 1 {
					assert.LessOrEqual(t, batchwrite.RequestSize("t", b), limit, "limit %+v: batch %d", l, i)
				}
				if i+1 < len(batches) && len(b) < items {
					next := append(slices.Clone(b), batches[i+1][0])
					assert.GreaterOrEqual(t, batchwrite.RequestSize("t", next), limit, "limit %+v: batch %d was closed while the next item fitted", l, i)
				}
			}
			require.Equal(t, len(reqs), len(got), "limit %+v", l)
			for i := range reqs {
				assert.Same(t, reqs[i].PutRequest, got[i].PutRequest, "limit %+v: item %d out of order", l, i)
			}
		}
	}
	assert.Empty(t, batchwrite.Split("t", nil, batchwrite.DefaultLimits()), "no request, no batch")
}

// TestRequestSizeCountsEveryComma: the size of 1 to 5 requests is the body
// the SDK sends (one comma between requests, none before the first).
func TestRequestSizeCountsEveryComma(t *testing.T) {
	f := &fakeDynamo{limit: 1 << 30, items: map[string]bool{}}
	db := client(t, f)
	for n := 1; n <= 5; n++ {
		var reqs []types.WriteRequest
		for i := 0; i < n; i++ {
			reqs = append(reqs, put(fmt.Sprintf("n%d-%d", n, i), nil))
		}
		_, err := db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"dev-hoge-user": reqs}})
		require.NoError(t, err)
		assert.Equal(t, f.bodies[len(f.bodies)-1], batchwrite.RequestSize("dev-hoge-user", reqs), "%d request(s)", n)
	}
}

// unprocessed is a Writer (the SDK interface) that leaves every request
// unprocessed, as a throttled table does.
type unprocessed struct{ calls int }

func (u *unprocessed) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	u.calls++
	return &dynamodb.BatchWriteItemOutput{UnprocessedItems: in.RequestItems}, nil
}

// TestUnprocessedGivesUpAfterTheAttempts: items left unprocessed are retried
// exactly Attempts times in all, then the error says how many are left.
func TestUnprocessedGivesUpAfterTheAttempts(t *testing.T) {
	for _, attempts := range []int{1, 2, 4} {
		u := &unprocessed{}
		reqs := []types.WriteRequest{put("a", nil), put("b", nil), put("c", nil)}
		n, err := batchwrite.Write(context.Background(), u, "dev-hoge-user", reqs, batchwrite.Backoff{Attempts: attempts, Base: time.Microsecond, Max: time.Microsecond}, batchwrite.DefaultLimits())
		require.Error(t, err)
		assert.Equal(t, 0, n, "nothing was written")
		assert.Equal(t, attempts, u.calls, "BatchWriteItem calls")
		assert.Contains(t, err.Error(), fmt.Sprintf("3 of 3 item(s) still unprocessed after %d attempts", attempts))
	}
}

// TestDefaultBackoff is the one retry policy of batch writes: 10 attempts,
// 50 ms doubling up to 5 s.
func TestDefaultBackoff(t *testing.T) {
	assert.Equal(t, batchwrite.Backoff{Attempts: 10, Base: 50 * time.Millisecond, Max: 5 * time.Second}, batchwrite.DefaultBackoff())
}

// TestTooLargeByHTTPStatus: a 413 answer is too large whatever its body; a
// 500 is not.
func TestTooLargeByHTTPStatus(t *testing.T) {
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}},
			Err:      errors.New("answer"),
		}}
	}
	assert.True(t, batchwrite.TooLarge(fmt.Errorf("BatchWriteItem: %w", status(http.StatusRequestEntityTooLarge))))
	assert.False(t, batchwrite.TooLarge(status(http.StatusInternalServerError)))
	assert.False(t, batchwrite.TooLarge(status(http.StatusBadRequest)))
}

// TestBackoffSleep: a backoff without delays returns at once (there is no
// jitter to draw from an empty range), and a cancelled context ends a long
// sleep with its error.
func TestBackoffSleep(t *testing.T) {
	for attempt := range 3 {
		require.NoError(t, batchwrite.Backoff{Attempts: 3}.Sleep(context.Background(), attempt))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := batchwrite.Backoff{Attempts: 3, Base: time.Hour, Max: time.Hour}.Sleep(ctx, 0)
	assert.ErrorIs(t, err, context.Canceled)
}
