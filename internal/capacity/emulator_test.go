package capacity_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/batchwrite"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

// sleepClock moves only when the bucket sleeps (one test goroutine).
type sleepClock struct{ now time.Time }

func (c *sleepClock) Now() time.Time { return c.now }

func (c *sleepClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return nil
}

// askedTotal passes calls to the emulator and notes whether each asked for
// ReturnConsumedCapacity TOTAL: moto reports ConsumedCapacity even when not
// asked (measured), so the response alone cannot show the request asked.
type askedTotal struct {
	*dynamodb.Client
	calls, asked int
}

func (a *askedTotal) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	a.calls++
	if in.ReturnConsumedCapacity == types.ReturnConsumedCapacityTotal {
		a.asked++
	}
	return a.Client.BatchWriteItem(ctx, in, o...)
}

func TestMain(m *testing.M) { harness.Main(m, &target) }

// TestBatchWritesChargedFromTheServiceReport: the batch writer's calls
// through Writes ask for ReturnConsumedCapacity TOTAL and are charged what
// the service reports (moto reports 1.0 a call, so the bucket's total is
// the number of calls, never 0); every item lands; the run's clock (fake, so
// nothing depends on the machine's speed) moved at least used/budget less
// one burst: the budget held on the units the service reported.
func TestBatchWritesChargedFromTheServiceReport(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "dev-" + harness.UniqueID() + "-budget"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id"})
	clk := &sleepClock{now: time.Unix(1_700_000_000, 0)}
	b, err := capacity.NewBucket(2, clk)
	if err != nil {
		t.Fatal(err)
	}
	users := fixture.Users(250)
	reqs := make([]types.WriteRequest, len(users))
	for i, u := range users {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: u}}
	}
	rec := &askedTotal{Client: db}
	n, err := batchwrite.Write(ctx, capacity.Writes(rec, table, b), table, reqs, batchwrite.DefaultBackoff(), batchwrite.DefaultLimits())
	if err != nil || n != len(reqs) {
		t.Fatalf("wrote %d of %d: %v", n, len(reqs), err)
	}
	out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	if err != nil || out.Count != int32(len(users)) {
		t.Fatalf("table holds %d items, want %d: %v", out.Count, len(users), err)
	}
	if rec.calls == 0 || rec.asked != rec.calls {
		t.Fatalf("%d of %d BatchWriteItem calls asked for ReturnConsumedCapacity TOTAL", rec.asked, rec.calls)
	}
	u := b.Usage()
	if u.Used < 1 {
		t.Fatalf("the bucket was charged %v units: ReturnConsumedCapacity was not asked for or not read", u.Used)
	}
	if min := u.Used/2 - 2; u.ElapsedSecs < min {
		t.Fatalf("%v units at 2 units/s took %.1f s of the run's clock, want at least %.1f", u.Used, u.ElapsedSecs, min)
	}
	t.Logf("emulator reported %v units over %d items; run clock %.1f s", u.Used, len(users), u.ElapsedSecs)
}
