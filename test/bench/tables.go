package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/fixture"
)

// rssKB is the max RSS of a finished process in KB.
func rssKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" { // bytes there, KB on Linux
		return ru.Maxrss / 1024
	}
	return ru.Maxrss
}

// createTable creates an on-demand table keyed by user_id (S), waits until
// it is ACTIVE and deletes it when the bench ends.
func (e *env) createTable(suffix string) (string, error) {
	name := "dev-" + e.id + "-" + suffix
	_, err := e.db.CreateTable(e.ctx, &dynamodb.CreateTableInput{TableName: &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest})
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", name, err)
	}
	e.cleanup = append(e.cleanup, func() {
		if _, err := e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
			fmt.Fprintf(os.Stderr, "bench: deleting %s: %v\n", name, err)
		}
	})
	return name, tablesettings.WaitActive(e.ctx, e.db, name, nil)
}

// users returns items [from, to) of the bench's table shape (~200 bytes:
// the pitr suite's users, fixture.Users).
func users(n int) []map[string]types.AttributeValue { return fixture.Users(n) }

// batchWrite writes requests to table with BatchWriteItem, 25 per call,
// e.workers calls at a time, retrying unprocessed items: the raw client.
func (e *env) batchWrite(table string, reqs []types.WriteRequest) error {
	g, ctx := errgroup.WithContext(e.ctx)
	g.SetLimit(e.workers)
	for i := 0; i < len(reqs); i += 25 {
		chunk := reqs[i:min(i+25, len(reqs))]
		g.Go(func() error {
			pending := map[string][]types.WriteRequest{table: chunk}
			for attempt := 0; len(pending[table]) > 0; attempt++ {
				if attempt == 10 {
					return fmt.Errorf("BatchWriteItem to %s: items still unprocessed after 10 attempts", table)
				}
				if attempt > 0 {
					time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
				}
				out, err := e.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
				if err != nil {
					return fmt.Errorf("BatchWriteItem to %s: %w", table, err)
				}
				pending = out.UnprocessedItems
			}
			return nil
		})
	}
	return g.Wait()
}

func puts(items []map[string]types.AttributeValue) []types.WriteRequest {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	return reqs
}

func deletes(items []map[string]types.AttributeValue) []types.WriteRequest {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"user_id": it["user_id"]}}}
	}
	return reqs
}

// rawScan reads every item of the tables with segments parallel Scan
// segments per table, all tables at once (as diff does), and counts them.
func (e *env) rawScan(segments int, tables ...string) (int64, error) {
	var n atomic.Int64
	g, ctx := errgroup.WithContext(e.ctx)
	for _, table := range tables {
		for seg := 0; seg < segments; seg++ {
			g.Go(func() error {
				in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments))}
				for {
					out, err := e.db.Scan(ctx, in)
					if err != nil {
						return fmt.Errorf("scanning %s: %w", table, err)
					}
					n.Add(int64(len(out.Items)))
					if len(out.LastEvaluatedKey) == 0 {
						return nil
					}
					in.ExclusiveStartKey = out.LastEvaluatedKey
				}
			})
		}
	}
	err := g.Wait()
	return n.Load(), err
}
