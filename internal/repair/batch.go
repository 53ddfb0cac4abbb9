package repair

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/batchwrite"
)

// Backoff is how batch calls retry what DynamoDB left unprocessed (DDB-API-02).
type Backoff = batchwrite.Backoff

// DefaultBackoff retries for about half a minute in the worst case.
func DefaultBackoff() Backoff { return batchwrite.DefaultBackoff() }

// writeBatch writes requests to table with batchwrite: batches sized by their
// encoded request (25 items, 16 MB), a refused batch retried in halves.
func writeBatch(ctx context.Context, db batchwrite.Writer, table string, reqs []types.WriteRequest, bo Backoff) error {
	_, err := batchwrite.Write(ctx, db, table, reqs, bo, batchwrite.DefaultLimits())
	return err
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
		if err := bo.Sleep(ctx, attempt); err != nil {
			return nil, err
		}
		pending = map[string]types.KeysAndAttributes{table: left}
	}
}
