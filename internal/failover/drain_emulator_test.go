package failover_test

// The drain on the local emulator. moto has no global tables, so
// fakeReplicationLink (a fake at the SDK interface, named so) stands in for
// replication between the pair's two real emulator tables: DescribeTable
// lists both as replicas, and an item written or deleted in one region
// reaches the other one `lag` later on a clock the test drives. Everything
// else (tables, items, resource policies, pointers, the ReplicationLatency
// metric) is the emulator's, over HTTP, through the production code paths.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
)

// testClock is a clock the test drives: Sleep moves it on at once.
type testClock struct {
	mu  sync.Mutex
	now time.Time
	// kill, when set, ends the sleep that would pass it (a SIGKILL during the drain).
	kill time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

var errKilled = errors.New("killed during the drain")

func (c *testClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.kill.IsZero() && !c.now.Add(d).Before(c.kill) {
		c.now = c.kill
		return errKilled
	}
	c.now = c.now.Add(d)
	return nil
}

// fakeReplicationLink replicates item writes between the pair's regions
// with a lag on the test clock; it is delivered when a region is read.
type fakeReplicationLink struct {
	p     pair
	clock *testClock
	lag   time.Duration

	mu      sync.Mutex
	pending []replicated
}

type replicated struct {
	to  string
	due time.Time
	put map[string]types.AttributeValue // nil: a delete of key
	key map[string]types.AttributeValue
}

func (l *fakeReplicationLink) other(region string) string {
	if region == home {
		return away
	}
	return home
}

// deliver applies every replicated write due by now.
func (l *fakeReplicationLink) deliver(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	var keep []replicated
	for _, w := range l.pending {
		if w.due.After(now) {
			keep = append(keep, w)
			continue
		}
		db := l.p.Clients(w.to).DynamoDB
		var err error
		if w.put != nil {
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.p.Table, Item: w.put})
		} else {
			_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.p.Table, Key: w.key})
		}
		if err != nil {
			return err
		}
	}
	l.pending = keep
	return nil
}

func (l *fakeReplicationLink) clients(region string) failover.Clients {
	c := l.p.Clients(region)
	c.DynamoDB = &replicaDB{DynamoDB: c.DynamoDB, link: l, region: region}
	return c
}

type replicaDB struct {
	failover.DynamoDB
	link   *fakeReplicationLink
	region string
}

func (d *replicaDB) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	out, err := d.DynamoDB.DescribeTable(ctx, in, o...)
	if err == nil {
		out.Table.Replicas = []types.ReplicaDescription{{RegionName: aws.String(home), ReplicaStatus: types.ReplicaStatusActive}, {RegionName: aws.String(away), ReplicaStatus: types.ReplicaStatusActive}}
	}
	return out, err
}

func (d *replicaDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := d.DynamoDB.PutItem(ctx, in, o...)
	if err == nil {
		d.link.mu.Lock()
		d.link.pending = append(d.link.pending, replicated{to: d.link.other(d.region), due: d.link.clock.Now().Add(d.link.lag), put: in.Item})
		d.link.mu.Unlock()
	}
	return out, err
}

func (d *replicaDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	out, err := d.DynamoDB.DeleteItem(ctx, in, o...)
	if err == nil {
		d.link.mu.Lock()
		d.link.pending = append(d.link.pending, replicated{to: d.link.other(d.region), due: d.link.clock.Now().Add(d.link.lag), key: in.Key})
		d.link.mu.Unlock()
	}
	return out, err
}

func (d *replicaDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := d.link.deliver(ctx); err != nil {
		return nil, err
	}
	return d.DynamoDB.GetItem(ctx, in, o...)
}

// drainSetup is a pair linked by fakeReplicationLink with lag, publishing
// ReplicationLatency of latency from home into away, and a runner on the
// test clock that notes when the fence landed and when the pointer flipped.
type drainSetup struct {
	p             pair
	clock         *testClock
	link          *fakeReplicationLink
	runner        *failover.Runner
	fenced        time.Time // the clock when fence-old ended
	flipped       time.Time // the clock when flip-pointer began
	appItemAtFlip bool      // the application's write before the fence was in away at the flip
	appKey        map[string]types.AttributeValue
	waits         int // OnWait calls (the countdown)
}

func newDrainSetup(t *testing.T, latency, lag time.Duration) *drainSetup {
	p := newPair(t, false)
	p.PublishLatency(t, home, away, float64(latency/time.Millisecond)/2, float64(latency/time.Millisecond))
	clock := &testClock{now: time.Now()}
	link := &fakeReplicationLink{p: p, clock: clock, lag: lag}
	d := &drainSetup{p: p, clock: clock, link: link,
		appKey: map[string]types.AttributeValue{"session_id": &types.AttributeValueMemberS{Value: "app-write-before-the-fence"}}}
	d.runner = &failover.Runner{
		Clients: link.clients, Now: clock.Now, Sleep: clock.Sleep, PollInterval: time.Second,
		Record: func(string, string, any) {},
		OnWait: func(waited, total time.Duration) { d.waits++ },
		OnStep: func(st failover.Step) {
			if st.Name == "fence-old" && st.Status == failover.StepDone {
				d.fenced = clock.Now()
			}
		},
	}
	d.runner.BeforeStep = func(name string) error {
		ctx := context.Background()
		switch name {
		case "fence-old":
			// The application's last write in the old region, just before the fence.
			_, err := link.clients(home).DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &p.Table, Item: d.appKey})
			return err
		case "flip-pointer":
			d.flipped = clock.Now()
			out, err := link.clients(away).DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &p.Table, Key: d.appKey, ConsistentRead: aws.Bool(true)})
			if err != nil {
				return err
			}
			d.appItemAtFlip = out.Item != nil
		}
		return nil
	}
	return d
}

func (d *drainSetup) request() failover.Request {
	req := d.p.request(failover.Failover, "", away, true)
	req.Rules.AllowUnreplicated = false // the link makes them replicas
	req.ReplicationTimeout = time.Minute
	return req
}

// TestDrainFlipsNoEarlierThanTenTimesLatency_DDB_DR_01: with recent
// ReplicationLatency L from the old region into the target, the pointer
// flips no earlier than 10·L after the fence (L large enough that 10·L is
// above the floor and below the cap), the write the application made in
// the old region just before the fence is in the new region at the flip,
// the drain canary was read there before it, and the countdown reported
// progress. Three values of L.
func TestDrainFlipsNoEarlierThanTenTimesLatency_DDB_DR_01(t *testing.T) {
	t.Parallel()
	for _, l := range []time.Duration{7 * time.Second, 12 * time.Second, 25 * time.Second} {
		t.Run(l.String(), func(t *testing.T) {
			d := newDrainSetup(t, l, l)
			res, err := d.runner.Run(context.Background(), d.request())
			require.NoError(t, err, "%+v %+v", res.Checks, res.Steps)
			require.NotNil(t, res.Drain)
			assert.Equal(t, failover.DrainByMetric, res.Drain.Rule)
			assert.Equal(t, l, res.Drain.MaxLatency, "the max the emulator's CloudWatch returned")
			assert.Equal(t, 10*l, res.Drain.Wait)
			assert.GreaterOrEqual(t, d.flipped.Sub(d.fenced), 10*l, "the flip comes no earlier than 10·L after the fence")
			assert.True(t, d.appItemAtFlip, "the write made before the fence is in the new region when the pointer flips")
			assert.Equal(t, failover.StepDone, statuses(res)["drain-check"])
			assert.Equal(t, int((10*l).Seconds())+1, d.waits, "the countdown's start, then one report a second")
			assert.Equal(t, away, d.p.Pointer(t, home))
			assert.Contains(t, check(res, "drain").Detail, "10 x max ReplicationLatency "+l.String())
		})
	}
}

// TestDrainCheckRefusesTheFlipWhenReplicationLags: the metric says L but
// replication actually lags far more (a region going bad): the drain
// canary is not in the target after the drain, so the pointer is NOT
// flipped; the old region stays fenced, `dr status` names the half-done
// state, and once replication catches up a re-run finishes.
func TestDrainCheckRefusesTheFlipWhenReplicationLags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDrainSetup(t, 10*time.Second, time.Hour)
	res, err := d.runner.Run(ctx, d.request())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not in "+away+" after the drain of 1m40s")
	assert.Contains(t, err.Error(), "the pointer was NOT flipped")
	assert.Equal(t, failover.StepFailed, statuses(res)["drain-check"])
	assert.Equal(t, failover.StepNotRun, statuses(res)["flip-pointer"])
	assert.Equal(t, home, d.p.Pointer(t, home))
	assert.Equal(t, home, d.p.Pointer(t, away))
	assert.True(t, d.p.Fenced(t, home))
	half := failover.Inspect(ctx, d.link.clients, d.p.Target, 15*time.Minute, d.clock.Now()).HalfDone()
	assert.Contains(t, half, "HALF-DONE")

	d.clock.now = d.clock.now.Add(time.Hour) // replication catches up, and is fast again
	d.link.lag = 5 * time.Second
	res, err = d.runner.Run(ctx, d.request())
	require.NoError(t, err, "%+v", res.Steps)
	assert.Equal(t, away, d.p.Pointer(t, home))
	assert.Equal(t, away, d.p.Pointer(t, away))
}

// TestKilledDuringTheDrainThenRerun: a failover killed in the middle of
// its drain (the process ends; nothing is undone) leaves the old region
// fenced and the pointer on it, which `dr status` names HALF-DONE; a re-run
// finds the drain canary the killed run wrote just before its fence,
// waits only what is left of the drain, verifies the canary in the target
// and flips: the flip still comes no earlier than the full drain after the
// first fence.
func TestKilledDuringTheDrainThenRerun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const l = 10 * time.Second // drain 100s
	d := newDrainSetup(t, l, l)
	start := d.clock.Now()
	d.clock.kill = start.Add(40 * time.Second)
	_, err := d.runner.Run(ctx, d.request())
	require.ErrorIs(t, err, errKilled)
	firstFence := d.fenced
	require.False(t, firstFence.IsZero())
	assert.True(t, d.p.Fenced(t, home))
	assert.Equal(t, home, d.p.Pointer(t, home))
	half := failover.Inspect(ctx, d.link.clients, d.p.Target, 15*time.Minute, d.clock.Now()).HalfDone()
	assert.Contains(t, half, "HALF-DONE")
	assert.Contains(t, half, "fenced but the pointer still names it")
	assert.Contains(t, half, "dynops dr failover --table "+d.p.Table+" --to "+away+" --yes")

	d.clock.kill = time.Time{}
	d.waits = 0
	res, err := d.runner.Run(ctx, d.request())
	require.NoError(t, err, "%+v", res.Steps)
	assert.GreaterOrEqual(t, d.flipped.Sub(firstFence), 10*l, "the drain counts from the first fence")
	assert.Less(t, d.waits, int((10 * l).Seconds()), "the re-run waits only the rest of the drain")
	assert.Equal(t, failover.StepDone, statuses(res)["drain-check"])
	for _, st := range res.Steps {
		if st.Name == "drain-canary" {
			assert.Contains(t, st.Detail, "is fenced already")
		}
	}
	assert.Equal(t, away, d.p.Pointer(t, home))
	assert.Empty(t, failover.Inspect(ctx, d.link.clients, d.p.Target, 15*time.Minute, d.clock.Now()).HalfDone())
}

// TestDRAndMigrateFencesOnOneTable_DDB_DR_01: on the emulator, a table
// fenced by a migrate cutover (FenceTable) and by a dr failover: the dr
// failback removes only dr's statements (migrate's stays, read back), and
// what migrate rollback runs (UnfenceTable) removes only migrate's.
func TestDRAndMigrateFencesOnOneTable_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	db := p.Clients(home).DynamoDB
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Table})
	require.NoError(t, err)
	arn := aws.ToString(dt.Table.TableArn)
	_, err = failover.FenceTable(ctx, db, arn, "")
	require.NoError(t, err)
	policy := func() string {
		doc, _, err := failover.ResourcePolicy(ctx, db, arn)
		require.NoError(t, err)
		return doc
	}
	require.True(t, failover.HasOwnFence(policy(), failover.OwnerMigrate))

	r := p.runner(new([]string))
	_, err = r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err)
	require.True(t, failover.HasOwnFence(policy(), failover.OwnerDR))
	require.True(t, failover.HasOwnFence(policy(), failover.OwnerMigrate), "dr's fence did not replace migrate's")

	res, err := r.Run(ctx, p.request(failover.Failback, away, home, true))
	require.NoError(t, err, "%+v", res.Steps)
	assert.False(t, failover.HasOwnFence(policy(), failover.OwnerDR), "the failback removed dr's fence")
	assert.True(t, failover.HasOwnFence(policy(), failover.OwnerMigrate), "and left migrate's")
	for _, st := range res.Steps {
		if st.Name == "unfence-target" {
			assert.Contains(t, st.Detail, "still fenced by statement "+failover.MigrateFenceSid)
		}
	}

	had, err := failover.UnfenceTable(ctx, db, arn)
	require.NoError(t, err)
	assert.True(t, had)
	assert.False(t, failover.HasFence(policy()), "migrate rollback removed its own; nothing is left")
}
