// Package capacity holds a bulk run to a capacity budget: read or write
// capacity units per second on one table, shared by every worker of the run.
//
// The budget is a token bucket (golang.org/x/time/rate) paid after the fact:
// DynamoDB says what a request cost only in its response (ReturnConsumedCapacity
// TOTAL), so a worker waits for the bucket before each request (Wait) and
// charges what the response reports (Charge). A charge larger than the bucket
// puts it in debt and the next Wait of any worker sleeps it off, so over a run
// the average stays at the budget; the excess is bounded by one burst (one
// second of budget) plus the requests in flight when the bucket ran dry.
package capacity

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/time/rate"
)

// DefaultFraction is the share of a provisioned table's capacity a bulk run
// takes when no budget is given: it leaves three quarters to the application.
const DefaultFraction = 0.25

// Clock is the time the bucket reads and sleeps on; tests inject a fake so
// no assertion depends on wall time.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// WallClock is the real clock.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (WallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Bucket is one budget (units per second) of one kind (read or write) on one
// table. A nil *Bucket is no budget: Wait returns at once and Charge only
// counts. It is safe for concurrent use.
type Bucket struct {
	limit float64
	clock Clock
	lim   *rate.Limiter

	mu      sync.Mutex
	carry   float64   // fractional units not yet taken from the bucket
	readyAt time.Time // when the bucket is out of debt
	used    float64
	start   time.Time
}

// NewBucket is a budget of unitsPerSecond (> 0) read on clock (WallClock when
// nil). The bucket holds one second of budget.
func NewBucket(unitsPerSecond float64, clock Clock) (*Bucket, error) {
	if unitsPerSecond <= 0 || math.IsNaN(unitsPerSecond) || math.IsInf(unitsPerSecond, 0) {
		return nil, fmt.Errorf("capacity budget %v units/s: must be more than 0", unitsPerSecond)
	}
	if clock == nil {
		clock = WallClock{}
	}
	burst := int(math.Ceil(unitsPerSecond))
	now := clock.Now()
	return &Bucket{
		limit: unitsPerSecond,
		clock: clock,
		lim:   rate.NewLimiter(rate.Limit(unitsPerSecond), burst),
		start: now,
	}, nil
}

// Limit is the budget in units per second (0 for no budget).
func (b *Bucket) Limit() float64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Wait blocks until the bucket is out of debt, or ctx is done.
func (b *Bucket) Wait(ctx context.Context) error {
	if b == nil {
		return ctx.Err()
	}
	b.mu.Lock()
	d := b.readyAt.Sub(b.clock.Now())
	b.mu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	return b.clock.Sleep(ctx, d)
}

// Charge takes units (what a response reported) from the bucket.
func (b *Bucket) Charge(units float64) {
	if b == nil || units <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += units
	b.carry += units
	now := b.clock.Now()
	for b.carry >= 1 {
		n := min(int(b.carry), b.lim.Burst())
		r := b.lim.ReserveN(now, n)
		if !r.OK() { // cannot happen: n is at most the burst
			break
		}
		if at := now.Add(r.DelayFrom(now)); at.After(b.readyAt) {
			b.readyAt = at
		}
		b.carry -= float64(n)
	}
}

// Usage is what a bucket has been charged: total units and the average units
// per second since it was made.
type Usage struct {
	Budget      float64 `json:"budget_units_per_second"`
	Used        float64 `json:"units_used"`
	PerSecond   float64 `json:"units_per_second"`
	ElapsedSecs float64 `json:"elapsed_seconds"`
}

// Usage reports what the run used so far.
func (b *Bucket) Usage() Usage {
	if b == nil {
		return Usage{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	el := b.clock.Now().Sub(b.start).Seconds()
	u := Usage{Budget: b.limit, Used: b.used, ElapsedSecs: el}
	if el > 0 {
		u.PerSecond = b.used / el
	}
	return u
}

// Units is the capacity units a response reported for table: CapacityUnits
// of the entries naming table (or without a name), which ReturnConsumedCapacity
// TOTAL fills. Entries of other tables are not counted.
func Units(table string, cc ...types.ConsumedCapacity) float64 {
	var u float64
	for _, c := range cc {
		if c.TableName != nil && aws.ToString(c.TableName) != table {
			continue
		}
		u += aws.ToFloat64(c.CapacityUnits)
	}
	return u
}

// Default is the budget a run takes on a table with provisioned capacity
// units per second when none is given: DefaultFraction of it, at least 1.
// It is 0 (no budget) for an on-demand table (provisioned 0).
func Default(provisioned int64) float64 {
	if provisioned <= 0 {
		return 0
	}
	return max(1, math.Floor(float64(provisioned)*DefaultFraction))
}

// BatchWriter is the BatchWriteItem call of a DynamoDB client (the
// batchwrite.Writer shape).
type BatchWriter interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Writes holds db's BatchWriteItem calls on table to the write budget b:
// each call waits for the bucket, asks for ReturnConsumedCapacity TOTAL and
// is charged what the response reports. With a nil b (no budget) it is db.
func Writes(db BatchWriter, table string, b *Bucket) BatchWriter {
	if b == nil {
		return db
	}
	return budgetedWriter{db: db, table: table, b: b}
}

type budgetedWriter struct {
	db    BatchWriter
	table string
	b     *Bucket
}

func (w budgetedWriter) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if err := w.b.Wait(ctx); err != nil {
		return nil, fmt.Errorf("waiting for the write budget of %s (%v units/s): %w", w.table, w.b.Limit(), err)
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := w.db.BatchWriteItem(ctx, &cp, o...)
	if out != nil {
		w.b.Charge(Units(w.table, out.ConsumedCapacity...))
	}
	return out, err
}

// Scanner is the Scan call of a DynamoDB client.
type Scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Scans holds db's Scan calls to the read budget of the table each call
// names (budgets, keyed by table name; a table without a bucket, or a nil
// bucket, has no budget): each call waits for its bucket, asks for
// ReturnConsumedCapacity TOTAL and is charged what the response reports.
// The workers of a run share one bucket per table.
func Scans(db Scanner, budgets map[string]*Bucket) Scanner {
	return budgetedScanner{db: db, budgets: budgets}
}

type budgetedScanner struct {
	db      Scanner
	budgets map[string]*Bucket
}

func (s budgetedScanner) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	table := aws.ToString(in.TableName)
	b := s.budgets[table]
	if b == nil {
		return s.db.Scan(ctx, in, o...)
	}
	if err := b.Wait(ctx); err != nil {
		return nil, fmt.Errorf("waiting for the read budget of %s (%v units/s): %w", table, b.Limit(), err)
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := s.db.Scan(ctx, &cp, o...)
	if out != nil && out.ConsumedCapacity != nil {
		b.Charge(Units(table, *out.ConsumedCapacity))
	}
	return out, err
}

// ItemWriter is the single-item writes of a DynamoDB client.
type ItemWriter interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Items holds db's PutItem and DeleteItem calls on table to the write
// budget b, as Writes does for BatchWriteItem. With a nil b it is db.
func Items(db ItemWriter, table string, b *Bucket) ItemWriter {
	if b == nil {
		return db
	}
	return budgetedItems{db: db, table: table, b: b}
}

type budgetedItems struct {
	db    ItemWriter
	table string
	b     *Bucket
}

func (w budgetedItems) wait(ctx context.Context) error {
	if err := w.b.Wait(ctx); err != nil {
		return fmt.Errorf("waiting for the write budget of %s (%v units/s): %w", w.table, w.b.Limit(), err)
	}
	return nil
}

func (w budgetedItems) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := w.wait(ctx); err != nil {
		return nil, err
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := w.db.PutItem(ctx, &cp, o...)
	if out != nil && out.ConsumedCapacity != nil {
		w.b.Charge(Units(w.table, *out.ConsumedCapacity))
	}
	return out, err
}

func (w budgetedItems) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := w.wait(ctx); err != nil {
		return nil, err
	}
	cp := *in
	cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := w.db.DeleteItem(ctx, &cp, o...)
	if out != nil && out.ConsumedCapacity != nil {
		w.b.Charge(Units(w.table, *out.ConsumedCapacity))
	}
	return out, err
}
