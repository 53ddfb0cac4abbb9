package repair

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/capacity"
)

// budgeted holds a repair's writes to the original table to a write
// budget: every PutItem, DeleteItem and BatchWriteItem waits for the
// bucket, asks for ReturnConsumedCapacity TOTAL and is charged what the
// response reports (capacity.Items and capacity.Writes). Reads are not
// charged: --max-write-units is a write budget.
type budgeted struct {
	DynamoDB
	items capacity.ItemWriter
	batch capacity.BatchWriter
}

func withBudget(db DynamoDB, table string, b *capacity.Bucket) DynamoDB {
	if b == nil {
		return db
	}
	return budgeted{DynamoDB: db, items: capacity.Items(db, table, b), batch: capacity.Writes(db, table, b)}
}

func (w budgeted) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return w.items.PutItem(ctx, in, o...)
}

func (w budgeted) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return w.items.DeleteItem(ctx, in, o...)
}

func (w budgeted) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return w.batch.BatchWriteItem(ctx, in, o...)
}
