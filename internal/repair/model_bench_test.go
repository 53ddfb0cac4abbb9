package repair

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/tablediff"
)

// modelDB is a DynamoDB model for the batch repair's benchmark: every call
// costs perCall plus perItem per item read or written. With serial set the
// calls are served one at a time (the emulator: one Python process); without
// it they overlap (AWS: the service scales, a call costs its latency).
type modelDB struct {
	DynamoDB
	perCall, readItem, writeItem time.Duration
	serial                       bool
	mu                           sync.Mutex
	items                        map[string]map[string]types.AttributeValue
}

func (m *modelDB) cost(d time.Duration) {
	if m.serial {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	time.Sleep(d)
}

func (m *modelDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}}}}, nil
}

func (m *modelDB) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	n := 0
	for t, ka := range in.RequestItems {
		for _, k := range ka.Keys {
			out.Responses[t] = append(out.Responses[t], m.items[k["id"].(*types.AttributeValueMemberS).Value])
			n++
		}
	}
	m.cost(m.perCall + time.Duration(n)*m.readItem)
	return out, nil
}

func (m *modelDB) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	n := 0
	for _, reqs := range in.RequestItems {
		n += len(reqs)
	}
	m.cost(m.perCall + time.Duration(n)*m.writeItem)
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// BenchmarkUnconditionalModel prints the batch repair's rate against a raw
// BatchWriteItem client (same 8 workers, batches of 25) of the same items on
// two service models: AWS-like (calls overlap, 20 ms each) and emulator-like
// (calls served one at a time; a read costs 4x a write per item, as moto
// 5.2.1 measured: ~2 ms per item read, ~0.5 ms per item written). Ratios
// only; nothing is asserted.
func BenchmarkUnconditionalModel(b *testing.B) {
	const n, workers = 2000, 8
	items, recs := modelItems(n)
	keys := writeKeys(b, "from", "to", recs)
	var raw []types.WriteRequest
	for _, r := range recs {
		k, err := tablediff.DecodeKey(r.Key)
		if err != nil {
			b.Fatal(err)
		}
		raw = append(raw, types.WriteRequest{PutRequest: &types.PutRequest{Item: items[k["id"].(*types.AttributeValueMemberS).Value]}})
	}
	for _, model := range []struct {
		name string
		db   *modelDB
	}{
		{"AWS-like (calls overlap, 20 ms each)", &modelDB{perCall: 20 * time.Millisecond, items: items}},
		{"emulator-like (one call at a time; an item read costs 4x an item written)", &modelDB{perCall: time.Millisecond, readItem: 2 * time.Millisecond / 10, writeItem: time.Millisecond / 20, serial: true, items: items}},
	} {
		b.Run(model.name, func(b *testing.B) {
			for range b.N {
				start := time.Now()
				var g errgroup.Group
				g.SetLimit(workers)
				for i := 0; i < n; i += 25 {
					g.Go(func() error {
						_, err := model.db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"to": raw[i:min(i+25, n)]}})
						return err
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				rawRate := n / time.Since(start).Seconds()
				start = time.Now()
				res, err := Run(context.Background(), model.db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				rate := float64(res.Copied) / time.Since(start).Seconds()
				fmt.Printf("repair --unconditional, %s: %.0f items/s; raw BatchWriteItem (%d workers) %.0f items/s; ratio %.2fx\n", model.name, rate, workers, rawRate, rate/rawRate)
				b.ReportMetric(rate/rawRate, "repair/raw")
			}
		})
	}
}
