package capacity_test

import (
	"context"
	"strings"
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

func TestResolveReadsTheTablesProvisionedCapacity(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	ondemand := "dev-" + harness.UniqueID() + "-od"
	fixture.Create(t, db, fixture.Table{Name: ondemand, HashKey: "user_id"})
	prov := "dev-" + harness.UniqueID() + "-prov"
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(prov), BillingMode: types.BillingModeProvisioned,
		AttributeDefinitions:  []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(40), WriteCapacityUnits: aws.Int64(12)}})
	if err != nil {
		t.Fatal(err)
	}
	fixture.Cleanup(t, db, prov)
	for _, c := range []struct {
		table string
		kind  capacity.Kind
		flag  float64
		want  float64
		says  string
	}{
		{prov, capacity.Write, 0, 3, "25 % of the table's 12 provisioned write units"},
		{prov, capacity.Read, 0, 10, "25 % of the table's 40 provisioned read units"},
		{prov, capacity.Write, 50, 50, "--max-write-units"},
		{ondemand, capacity.Write, 0, 0, "on-demand table: no budget"},
		{ondemand, capacity.Read, 7, 7, "--max-read-units"},
	} {
		b, err := capacity.Resolve(ctx, db, c.table, c.kind, c.flag)
		if err != nil {
			t.Fatalf("%s %s: %v", c.table, c.kind, err)
		}
		if b.UnitsPerSecond != c.want || b.Bucket.Limit() != c.want || !strings.Contains(b.String(), c.says) {
			t.Errorf("%s %s flag %v: got %v (%s), want %v saying %q", c.table, c.kind, c.flag, b.UnitsPerSecond, b, c.want, c.says)
		}
	}
	if _, err := capacity.Resolve(ctx, db, "dev-"+harness.UniqueID()+"-missing", capacity.Write, 0); err == nil || !strings.Contains(err.Error(), "--max-write-units") {
		t.Fatalf("a table whose capacity cannot be read: %v, want an error naming --max-write-units", err)
	}
}

// askedScan notes whether each Scan asked for ReturnConsumedCapacity TOTAL.
type askedScan struct {
	*dynamodb.Client
	calls, asked int
}

func (a *askedScan) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	a.calls++
	if in.ReturnConsumedCapacity == types.ReturnConsumedCapacityTotal {
		a.asked++
	}
	return a.Client.Scan(ctx, in, o...)
}

// TestScansChargedFromTheServiceReport: Scans of a budgeted table ask for
// ReturnConsumedCapacity TOTAL and are charged what the service reports, on
// that table's bucket only; a table without a budget is scanned as asked.
func TestScansChargedFromTheServiceReport(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	budgeted := "dev-" + harness.UniqueID() + "-readbudget"
	free := "dev-" + harness.UniqueID() + "-nobudget"
	for _, name := range []string{budgeted, free} {
		fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
		fixture.Put(t, db, name, fixture.Users(120))
	}
	clk := &sleepClock{now: time.Unix(1_700_000_000, 0)}
	b, err := capacity.NewBucket(1, clk)
	if err != nil {
		t.Fatal(err)
	}
	rec := &askedScan{Client: db}
	s := capacity.Scans(rec, map[string]*capacity.Bucket{budgeted: b})
	scanAll := func(table string) int {
		n := 0
		in := &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(25)}
		for {
			out, err := s.Scan(ctx, in)
			if err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			n += len(out.Items)
			if len(out.LastEvaluatedKey) == 0 {
				return n
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	if n := scanAll(budgeted); n != 120 {
		t.Fatalf("read %d items of %s, want 120", n, budgeted)
	}
	budgetedCalls := rec.calls
	if rec.asked != budgetedCalls {
		t.Fatalf("%d of %d Scans of the budgeted table asked for ReturnConsumedCapacity TOTAL", rec.asked, budgetedCalls)
	}
	u := b.Usage()
	if u.Used <= 0 {
		t.Fatalf("the bucket was charged %v units: the Scan's ConsumedCapacity was not read", u.Used)
	}
	if min := u.Used/1 - 2; u.ElapsedSecs < min { // less one burst and the last call, charged after it ran
		t.Fatalf("%v units at 1 unit/s took %.1f s of the run's clock, want at least %.1f", u.Used, u.ElapsedSecs, min)
	}
	if n := scanAll(free); n != 120 {
		t.Fatalf("read %d items of %s, want 120", n, free)
	}
	if rec.asked != budgetedCalls {
		t.Fatalf("a Scan of the table without a budget asked for ConsumedCapacity (%d asked, %d budgeted calls)", rec.asked, budgetedCalls)
	}
	if b.Usage().Used != u.Used {
		t.Fatalf("the unbudgeted table's Scans were charged to the other table's bucket")
	}
	t.Logf("emulator reported %v read units over %d Scan calls", u.Used, budgetedCalls)
}
