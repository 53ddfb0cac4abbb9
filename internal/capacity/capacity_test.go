package capacity

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeClock is time that moves only when a worker sleeps or works, so the
// averages below are exact and no assertion depends on the machine's speed.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.advance(d)
	return nil
}

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// fakeBatchResponse is what a BatchWriteItem response with
// ReturnConsumedCapacity TOTAL reports: one entry per table. moto reports a
// flat 1.0 per call, so the per-item accounting is tested on this fake.
func fakeBatchResponse(table string, items int, unitsPerItem float64) []types.ConsumedCapacity {
	return []types.ConsumedCapacity{
		{TableName: aws.String(table), CapacityUnits: aws.Float64(float64(items) * unitsPerItem)},
		{TableName: aws.String("other"), CapacityUnits: aws.Float64(1000)},
	}
}

// TestBudgetWithFakeConsumedCapacity: a run of 5,000 items of 2 units each
// in batches of 25 (50 units a response) at a budget of 100 units/s, each
// request taking 10 ms. The average units/s over the run stays within the
// budget plus one burst (100 units) and one response in flight (50 units)
// spread over the run (about 100 s, so 1.5 %); and the bucket does not hold the run
// far below its budget (at least 95 %).
func TestBudgetWithFakeConsumedCapacity(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	b, err := NewBucket(100, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const items, batch, perItem = 5000, 25, 2.0
	for done := 0; done < items; done += batch {
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		clk.advance(10 * time.Millisecond)
		b.Charge(Units("t", fakeBatchResponse("t", batch, perItem)...))
	}
	u := b.Usage()
	if u.Used != items*perItem {
		t.Fatalf("used %v units, want %v (other tables' units must not count)", u.Used, items*perItem)
	}
	// The bucket starts full (one burst, 100 units) and the last response
	// is charged after it was sent (50 units): used <= 100 x elapsed + 150.
	if max := 100 + 150/u.ElapsedSecs; u.PerSecond > max {
		t.Fatalf("average %.2f units/s over %.1f s, budget 100 (tolerance to %.1f)", u.PerSecond, u.ElapsedSecs, max)
	}
	if u.PerSecond < 95 {
		t.Fatalf("average %.2f units/s: the bucket holds the run far below its budget of 100", u.PerSecond)
	}
	// The estimate a dry run would print (items x units per item / budget)
	// is within 10 % of the time the run took.
	est := items * perItem / 100.0
	if d := u.ElapsedSecs/est - 1; d > 0.1 || d < -0.1 {
		t.Fatalf("run took %.1f s, estimate %.1f s (off by %.0f %%)", u.ElapsedSecs, est, d*100)
	}
}

// TestBudgetSharedByWorkersWithFakeConsumedCapacity: eight workers share one
// bucket; their total stays within the budget as one worker's does.
func TestBudgetSharedByWorkersWithFakeConsumedCapacity(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	b, err := NewBucket(40, clk)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // one worker acts at a time: the fake clock is shared time
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				mu.Lock()
				if err := b.Wait(context.Background()); err != nil {
					t.Error(err)
				}
				b.Charge(Units("t", types.ConsumedCapacity{CapacityUnits: aws.Float64(4.5)}))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	u := b.Usage()
	if u.Used != 8*50*4.5 {
		t.Fatalf("used %v, want %v", u.Used, 8*50*4.5)
	}
	// 1800 units at 40/s is 45 s; one burst (40) plus one charge (4.5) is
	// 2.5 % of the run; plus under one unit of carry not yet taken.
	if u.PerSecond > 40+(40+4.5+1)/u.ElapsedSecs {
		t.Fatalf("eight workers averaged %.2f units/s, budget 40", u.PerSecond)
	}
}

func TestNoBudget(t *testing.T) {
	var b *Bucket
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Charge(10)
	if b.Limit() != 0 || b.Usage() != (Usage{}) {
		t.Fatal("a nil bucket is no budget")
	}
	for _, v := range []float64{0, -1} {
		if _, err := NewBucket(v, nil); err == nil {
			t.Errorf("NewBucket(%v) accepted", v)
		}
	}
}

func TestDefault(t *testing.T) {
	for _, c := range []struct {
		prov int64
		want float64
	}{{0, 0}, {1, 1}, {3, 1}, {100, 25}, {1000, 250}, {10, 2}} {
		if got := Default(c.prov); got != c.want {
			t.Errorf("Default(%d) = %v, want %v", c.prov, got, c.want)
		}
	}
}

func TestWaitHonoursCancel(t *testing.T) {
	b, _ := NewBucket(1, nil)
	b.Charge(100) // 99 s of debt
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Wait(ctx); err == nil {
		t.Fatal("Wait in debt with a cancelled context returned nil")
	}
}
