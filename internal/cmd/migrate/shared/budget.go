package shared

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/migrate"
)

// Hold resolves the budgets of the scanned and written tables (b.Tables:
// the flag, else 25 % of a provisioned table's capacity, else none), said
// on stderr before the step, and holds c.DB's Scans and writes to them,
// each table to its own bucket shared by all workers.
func Hold(ctx context.Context, f *factory.Factory, b *budget.Budgets, c *migrate.Clients, scanned, written []string) error {
	reads, err := b.Tables(ctx, f, c.DB, capacity.Read, scanned)
	if err != nil {
		return err
	}
	writes, err := b.Tables(ctx, f, c.DB, capacity.Write, written)
	if err != nil {
		return err
	}
	c.DB = budgetedDB{DynamoDB: c.DB, scans: capacity.Scans(c.DB, reads), writes: writes}
	return nil
}

// budgetedDB holds a migration's Scans and writes to per-table budgets.
type budgetedDB struct {
	migrate.DynamoDB
	scans  capacity.Scanner
	writes map[string]*capacity.Bucket
}

func (d budgetedDB) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return d.scans.Scan(ctx, in, o...)
}

// BatchWriteItem: the migration's batches each write one table
// (batchwrite.Split).
func (d budgetedDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if len(in.RequestItems) == 1 {
		for t := range in.RequestItems {
			return capacity.Writes(d.DynamoDB, t, d.writes[t]).BatchWriteItem(ctx, in, o...)
		}
	}
	return d.DynamoDB.BatchWriteItem(ctx, in, o...)
}

func (d budgetedDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	t := aws.ToString(in.TableName)
	return capacity.Items(d.DynamoDB, t, d.writes[t]).PutItem(ctx, in, o...)
}

func (d budgetedDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	t := aws.ToString(in.TableName)
	return capacity.Items(d.DynamoDB, t, d.writes[t]).DeleteItem(ctx, in, o...)
}
