package migrate_test

// The example domain on the target: the aiagent single table (PK/SK, GSI1 and
// GSI2 on the generic GSI1PK/GSI1SK/GSI2PK/GSI2SK, a NEW_AND_OLD_IMAGES
// stream), the twelve destinations of modules/dynamodb-stack/examples/migration
// (created from its tables.yaml) and items of every domain plus junk.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// The example's names, as this package's tests call them.
const (
	product = migrationexample.Product
	source  = migrationexample.Source
)

var (
	routesFile   = migrationexample.RoutesFile
	destinations = migrationexample.Destinations
	createTable  = migrationexample.CreateTable
	sourceSpec   = migrationexample.SourceSpec
	items        = migrationexample.Items
	kinds        = migrationexample.Kinds
	s            = migrationexample.S
	num          = migrationexample.N
)

// domain is the example domain on one target.
type domain struct {
	db *dynamodb.Client
}

// setup creates the source and (unless skipped) the twelve destinations.
func setup(t testing.TB, withDestinations bool) *domain {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	createTable(t, db, source, sourceSpec(), false)
	if withDestinations {
		for usage, spec := range destinations(t) {
			createTable(t, db, fmt.Sprintf("dev-%s-%s", product, usage), spec, false)
		}
	}
	return &domain{db: db}
}

// populate writes items to the source, then enables its stream.
func (d *domain) populate(t testing.TB, n int) { migrationexample.Populate(t, d.db, n) }

// writer changes the source while a migration runs: new items, updates,
// route-changing moves (an item's SK prefix changes: delete + put under the
// new key) and deletes, at about rate operations per second.
type writer struct {
	d                             *domain
	stop                          chan struct{}
	once                          sync.Once
	done                          sync.WaitGroup
	puts, updates, moves, deletes atomic.Int64
	errs                          atomic.Int64
	next                          atomic.Int64
}

func (d *domain) startWriter(t testing.TB, n int, rate int) *writer {
	w := &writer{d: d, stop: make(chan struct{})}
	w.next.Store(int64(n + 1_000_000))
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			if err := w.op(rng, n); err != nil {
				w.errs.Add(1)
				t.Logf("writer: %v", err)
			}
		}
	}()
	return w
}

func (w *writer) op(rng *rand.Rand, n int) error {
	ctx := context.Background()
	db := w.d.db
	i := rng.IntN(n)
	switch op := rng.IntN(10); {
	case op < 3: // put a new item of any domain
		j := int(w.next.Add(1))
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(source), Item: kinds[j%len(kinds)](j)})
		if err == nil {
			w.puts.Add(1)
		}
		return err
	case op < 6: // update a task (or whatever lives at i)
		it := kinds[i%len(kinds)](i)
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(source),
			Key:                       map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]},
			UpdateExpression:          aws.String("SET #u = :u, #c = if_not_exists(#c, :z) + :one"),
			ConditionExpression:       aws.String("attribute_exists(PK)"), // never resurrect a moved or deleted item
			ExpressionAttributeNames:  map[string]string{"#u": "updated_by", "#c": "changes"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":u": s(fmt.Sprintf("writer-%d", rng.IntN(1000))), ":z": num(0), ":one": num(1)}})
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) {
			return nil
		}
		if err == nil {
			w.updates.Add(1)
		}
		return err
	case op < 8: // move: the item's SK prefix changes, so its route does
		it := kinds[7](i - i%len(kinds) + 7) // a task
		key := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(source), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil || got.Item == nil {
			return err
		}
		moved := map[string]types.AttributeValue{}
		for k, v := range got.Item {
			moved[k] = v
		}
		moved["SK"] = s("EMAIL_MESSAGE#from-" + it["SK"].(*types.AttributeValueMemberS).Value)
		delete(moved, "GSI1PK")
		delete(moved, "GSI1SK")
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(source), Item: moved}); err != nil {
			return err
		}
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(source), Key: key})
		if err == nil {
			w.moves.Add(1)
		}
		return err
	default: // delete
		it := kinds[i%len(kinds)](i)
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(source), Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}})
		if err == nil {
			w.deletes.Add(1)
		}
		return err
	}
}

// halt stops the writer and waits for its last operation.
func (w *writer) halt() {
	w.once.Do(func() { close(w.stop) })
	w.done.Wait()
}

func (w *writer) String() string {
	return fmt.Sprintf("puts %d, updates %d, moves %d, deletes %d, errors %d", w.puts.Load(), w.updates.Load(), w.moves.Load(), w.deletes.Load(), w.errs.Load())
}
