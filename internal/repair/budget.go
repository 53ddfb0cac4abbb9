package repair

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/capacity"
)

// budgeted holds a repair's writes to the original table to a write
// budget: every PutItem, DeleteItem and BatchWriteItem waits for the
// bucket, asks for ReturnConsumedCapacity TOTAL and is charged what the
// response reports (the batch writes through capacity.Writes). Reads are
// not charged: --max-write-units is a write budget.
type budgeted struct {
	DynamoDB
	table string
	b     *capacity.Bucket
}

func withBudget(db DynamoDB, table string, b *capacity.Bucket) DynamoDB {
	if b == nil {
		return db
	}
	return budgeted{DynamoDB: db, table: table, b: b}
}

func (w budgeted) wait(ctx context.Context) error {
	if err := w.b.Wait(ctx); err != nil {
		return fmt.Errorf("waiting for the write budget of %s (%v units/s): %w", w.table, w.b.Limit(), err)
	}
	return nil
}

func (w budgeted) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := w.wait(ctx); err != nil {
		return nil, err
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := w.DynamoDB.PutItem(ctx, &cp, o...)
	if out != nil && out.ConsumedCapacity != nil {
		w.b.Charge(capacity.Units(w.table, *out.ConsumedCapacity))
	}
	return out, err
}

func (w budgeted) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := w.wait(ctx); err != nil {
		return nil, err
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := w.DynamoDB.DeleteItem(ctx, &cp, o...)
	if out != nil && out.ConsumedCapacity != nil {
		w.b.Charge(capacity.Units(w.table, *out.ConsumedCapacity))
	}
	return out, err
}

func (w budgeted) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return capacity.Writes(w.DynamoDB, w.table, w.b).BatchWriteItem(ctx, in, o...)
}
