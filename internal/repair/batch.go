package repair

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Backoff is how batch calls retry what DynamoDB left unprocessed
// (DDB-API-02): up to Attempts calls, sleeping a random time up to
// Base x 2^n (at most Max) between them.
type Backoff struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultBackoff retries for about half a minute in the worst case.
func DefaultBackoff() Backoff {
	return Backoff{Attempts: 10, Base: 50 * time.Millisecond, Max: 5 * time.Second}
}

func (b Backoff) sleep(ctx context.Context, attempt int) error {
	d := min(b.Base<<attempt, b.Max)
	if d > 0 {
		d = time.Duration(rand.Int64N(int64(d))) + 1
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// batchWriter is the part of the API writeBatch uses.
type batchWriter interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// writeBatch writes up to 25 requests to table with BatchWriteItem, retrying
// UnprocessedItems with backoff until none are left or attempts run out.
func writeBatch(ctx context.Context, db batchWriter, table string, reqs []types.WriteRequest, bo Backoff) error {
	pending := map[string][]types.WriteRequest{table: reqs}
	for attempt := 0; ; attempt++ {
		out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return fmt.Errorf("BatchWriteItem to %s: %w", table, err)
		}
		left := out.UnprocessedItems[table]
		if len(left) == 0 {
			return nil
		}
		if attempt+1 >= bo.Attempts {
			return fmt.Errorf("BatchWriteItem to %s: %d of %d item(s) still unprocessed after %d attempts (throttled?): retry later",
				table, len(left), len(reqs), bo.Attempts)
		}
		if err := bo.sleep(ctx, attempt); err != nil {
			return err
		}
		pending = map[string][]types.WriteRequest{table: left}
	}
}

// batchGetter is the part of the API getBatch uses.
type batchGetter interface {
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// getBatch reads up to 100 keys from table with BatchGetItem (consistent
// reads), retrying UnprocessedKeys with backoff. Missing items are absent
// from the result.
func getBatch(ctx context.Context, db batchGetter, table string, keys []map[string]types.AttributeValue, bo Backoff) ([]map[string]types.AttributeValue, error) {
	consistent := true
	pending := map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: &consistent}}
	var items []map[string]types.AttributeValue
	for attempt := 0; ; attempt++ {
		out, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, fmt.Errorf("BatchGetItem from %s: %w", table, err)
		}
		items = append(items, out.Responses[table]...)
		left, ok := out.UnprocessedKeys[table]
		if !ok || len(left.Keys) == 0 {
			return items, nil
		}
		if attempt+1 >= bo.Attempts {
			return nil, fmt.Errorf("BatchGetItem from %s: %d key(s) still unprocessed after %d attempts (throttled?): retry later",
				table, len(left.Keys), bo.Attempts)
		}
		if err := bo.sleep(ctx, attempt); err != nil {
			return nil, err
		}
		pending = map[string]types.KeysAndAttributes{table: left}
	}
}

// WriteBatch writes up to 25 requests to table with BatchWriteItem, retrying
// UnprocessedItems with backoff (DDB-API-02). It is the one batch writer of
// dynops: `dynops migrate backfill` writes through it too.
func WriteBatch(ctx context.Context, db interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}, table string, reqs []types.WriteRequest, bo Backoff) error {
	return writeBatch(ctx, db, table, reqs, bo)
}
