package redrive

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/testctx"
)

// lockedShard is a shard that several workers of a run may read at once.
type lockedShard struct {
	mu sync.Mutex
	s  *shard
}

func (l *lockedShard) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.GetShardIterator(ctx, in, o...)
}

func (l *lockedShard) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.GetRecords(ctx, in, o...)
}

// memTarget records the events it was given, by the batch's first
// sequence number; a batch named in fail is not delivered.
type memTarget struct {
	mu     sync.Mutex
	events map[string]string // first sequence number of the batch -> event
	fail   map[string]bool
}

func (t *memTarget) Deliver(_ context.Context, rec onfailure.Record, event []byte) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fail[rec.Batch.StartSequenceNumber] {
		return "fn", errors.New("injected: delivery failed")
	}
	t.events[rec.Batch.StartSequenceNumber] = string(event)
	return "fn", nil
}

// countInvoker counts invocations.
type countInvoker struct{ calls atomic.Int32 }

func (c *countInvoker) Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	c.calls.Add(1)
	return &lambda.InvokeOutput{StatusCode: 200}, nil
}

const runFunction = "arn:aws:lambda:eu-west-1:123456789012:function:dev-hoge-order-consumer"

// dlqOf is a queue whose messages are on-failure records of batches of 3
// records (message i: sequence numbers 100+10i .. 102+10i) that arrived
// `age` ago; bodies named in raw replace the record.
func dlqOf(t *testing.T, n int, age time.Duration, raw map[int]string) *memQueue {
	q := newMemQueue(n)
	for i, m := range q.msgs {
		if b, ok := raw[i]; ok {
			m.body = b
			continue
		}
		b := batch(100+10*i, 102+10*i)
		b.BatchSize = 3
		b.ApproximateArrivalOfFirstRecord = time.Now().Add(-age)
		body, err := onfailure.Encode(onfailure.Record{RequestContext: onfailure.RequestContext{FunctionArn: runFunction}, Batch: &b})
		require.NoError(t, err)
		m.body = body
	}
	return q
}

type runCase struct {
	name   string
	n      int
	age    time.Duration // of every batch
	raw    map[int]string
	first  int // the shard's first sequence number (100: nothing trimmed)
	setup  func(q *memQueue, tg *memTarget)
	o      Options
	counts map[string]int
	left   int // messages still in the queue
	kept   int
	// reason: a substring of the reason of every outcome with this status.
	reason map[string]string
}

// Run's decisions per message, through a queue in memory (visibility
// timeouts, failing and lost deletes), a fake shard and a fake target: what
// is deleted, what is kept and made visible again, and what the report and
// the audit log say.
func TestRunOutcomes(t *testing.T) {
	expired := onfailure.Retention + time.Hour
	cases := []runCase{
		{name: "dry run: nothing delivered or deleted", n: 4, o: Options{},
			counts: map[string]int{WouldReplay: 4}, left: 4, kept: 4},
		{name: "apply: every batch delivered, then deleted", n: 12, o: Options{Apply: true, Concurrency: 3},
			counts: map[string]int{Replayed: 12}},
		{name: "--max takes only that many", n: 12, o: Options{Apply: true, Max: 5},
			counts: map[string]int{Replayed: 5}, left: 7},
		{name: "not an on-failure record: kept", n: 3, raw: map[int]string{1: "not json"}, o: Options{Apply: true},
			counts: map[string]int{Replayed: 2, KeptMalformed: 1}, left: 1, kept: 1, reason: map[string]string{KeptMalformed: "not a DynamoDB Streams on-failure record"}},
		{name: "past the stream's retention: kept", n: 2, age: expired, o: Options{Apply: true},
			counts: map[string]int{Expired: 2}, left: 2, kept: 2, reason: map[string]string{Expired: ", 1h0m0s past the 24h0m0s stream retention (DDB-STREAM-05)"}},
		{name: "past retention, --discard-expired: deleted", n: 2, age: expired, o: Options{Apply: true, DiscardExpired: true},
			counts: map[string]int{Discarded: 2}, reason: map[string]string{Discarded: "DDB-STREAM-05"}},
		{name: "past retention, --discard-expired in a dry run: kept", n: 2, age: expired, o: Options{DiscardExpired: true},
			counts: map[string]int{Expired: 2}, left: 2, kept: 2},
		{name: "trimmed from the stream, --discard-expired: deleted", n: 3, first: 111, o: Options{Apply: true, DiscardExpired: true},
			counts: map[string]int{Discarded: 2, Replayed: 1}, reason: map[string]string{Discarded: "starts at 111 now"}},
		{name: "trimmed from the stream: kept", n: 3, first: 111, o: Options{Apply: true},
			counts: map[string]int{Expired: 2, Replayed: 1}, left: 2, kept: 2},
		{name: "discarding fails: kept as expired", n: 1, age: expired, o: Options{Apply: true, DiscardExpired: true},
			setup:  func(q *memQueue, _ *memTarget) { q.failDelete[q.msgs[0].body] = true },
			counts: map[string]int{Expired: 1}, left: 1, kept: 1, reason: map[string]string{Expired: "; discarding failed: deleting message id-00 from dlq: injected: delete failed"}},
		{name: "a delivery fails: kept", n: 3, o: Options{Apply: true},
			setup:  func(_ *memQueue, tg *memTarget) { tg.fail["110"] = true },
			counts: map[string]int{Replayed: 2, Failed: 1}, left: 1, kept: 1, reason: map[string]string{Failed: "injected: delivery failed"}},
		{name: "a delete fails: deleted when it comes back, not replayed twice", n: 3, o: Options{Apply: true},
			setup:  func(q *memQueue, _ *memTarget) { q.failDelete[q.msgs[2].body] = true },
			counts: map[string]int{Replayed: 3}},
		{name: "a delete whose answer was lost: counted replayed", n: 3, o: Options{Apply: true},
			setup:  func(q *memQueue, _ *memTarget) { q.loseDeleteAnswer[q.msgs[1].body] = true },
			counts: map[string]int{Replayed: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			age := c.age
			if age == 0 {
				age = time.Hour
			}
			q := dlqOf(t, c.n, age, c.raw)
			first := c.first
			if first == 0 {
				first = 100
			}
			tg := &memTarget{events: map[string]string{}, fail: map[string]bool{}}
			if c.setup != nil {
				c.setup(q, tg)
			}
			var mu sync.Mutex
			acts := map[string]int{}
			var progress []int
			o := c.o
			o.Act = func(what, _ string, _ any) { mu.Lock(); acts[what]++; mu.Unlock() }
			o.Progress = func(done int, _ Outcome) { mu.Lock(); progress = append(progress, done); mu.Unlock() }
			var target Target = tg
			inv := &countInvoker{}
			if !o.Apply {
				target = Function{Client: inv} // the record's function
			}
			rep, err := Run(testctx.Bounded(t), Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
				&lockedShard{s: &shard{first: first, last: 1000, pageSize: 10}}, target, o)
			require.NoError(t, err)

			assert.Equal(t, c.counts, rep.Counts)
			total := 0
			for _, n := range c.counts {
				total += n
			}
			require.Len(t, rep.Outcomes, total)
			assert.Equal(t, !c.o.Apply, rep.DryRun)
			assert.Equal(t, "dlq", rep.Queue)
			assert.Equal(t, c.kept, rep.Kept())
			assert.Equal(t, c.left, q.left(), "messages still in the queue")
			assert.Zero(t, rep.Remaining)
			sort.Ints(progress)
			for i, d := range progress {
				assert.Equal(t, i+1, d, "progress counts every finished message once")
			}
			assert.Len(t, progress, total)

			// Every message still in the queue is visible again at once.
			q.mu.Lock()
			for _, m := range q.msgs {
				if !m.deleted {
					assert.False(t, time.Now().Before(m.visibleAt), "%s is made visible again", m.id)
				}
			}
			q.mu.Unlock()

			for _, out := range rep.Outcomes {
				if want, ok := c.reason[out.Status]; ok {
					assert.Contains(t, out.Reason, want, "%s: %s", out.MessageID, out.Status)
				}
				switch out.Status {
				case Replayed, WouldReplay:
					require.Len(t, out.Records, 3, out.MessageID)
					assert.Equal(t, out.Start, out.Records[0].SequenceNumber)
					assert.Equal(t, out.End, out.Records[2].SequenceNumber)
					assert.Equal(t, "dev-hoge-order", out.Table)
				}
				if out.Status == WouldReplay {
					assert.Equal(t, runFunction, out.Target, "a dry run names where it would deliver")
				}
				if out.Status == Replayed {
					assert.Equal(t, "fn", out.Target)
					assert.Contains(t, tg.events[out.Start], `"eventSourceARN":"arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-order/stream/`)
				}
			}
			delivered := c.counts[Replayed]
			assert.Len(t, tg.events, delivered, "delivered once per replayed message")
			assert.Zero(t, inv.calls.Load(), "a dry run invokes nothing")
			assert.Equal(t, delivered, acts["dlq.replay"])
			assert.Equal(t, c.counts[WouldReplay], acts["dlq.would-replay"])
			assert.Equal(t, c.counts[Discarded], acts["dlq.discard-expired"])
			assert.Equal(t, c.kept-c.counts[WouldReplay], acts["dlq.keep"], "every message kept is audited with its reason")
			assert.Equal(t, delivered-lostAnswers(c), acts["dlq.delete"], "a delete is audited when it succeeded")
		})
	}
}

// lostAnswers: deletes that happened but whose answer was lost are not
// audited as deletes.
func lostAnswers(c runCase) int {
	if strings.Contains(c.name, "answer was lost") {
		return 1
	}
	return 0
}

// The delete that failed: its outcome turns replayed when the message comes
// back and is deleted, and the report says so.
func TestRunDeletesAMessageThatComesBack(t *testing.T) {
	q := dlqOf(t, 2, time.Hour, nil)
	q.failDelete[q.msgs[0].body] = true
	q.loseDeleteAnswer[q.msgs[1].body] = true
	tg := &memTarget{events: map[string]string{}, fail: map[string]bool{}}
	rep, err := Run(testctx.Bounded(t), Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
		&lockedShard{s: &shard{first: 100, last: 1000, pageSize: 10}}, tg, Options{Apply: true})
	require.NoError(t, err)
	require.Len(t, rep.Outcomes, 2)
	reasons := map[string]string{}
	for _, o := range rep.Outcomes {
		assert.Equal(t, Replayed, o.Status)
		reasons[o.MessageID] = o.Reason
	}
	assert.Equal(t, "the first delete failed; deleted when the message came back", reasons["id-00"])
	assert.Equal(t, "the delete's answer was lost; the message is gone from the queue", reasons["id-01"])
	assert.Equal(t, map[string]int{Replayed: 2}, rep.Counts, "no not-deleted count left behind")
	assert.Zero(t, q.left())
	assert.Len(t, tg.events, 2)
}

// A message held by another consumer longer than the wait: the run says how
// many it did not take, and returns the RemainingError.
func TestRunReportsRemaining(t *testing.T) {
	q := dlqOf(t, 5, time.Hour, nil)
	q.hideByOther(2, time.Minute)
	tg := &memTarget{events: map[string]string{}, fail: map[string]bool{}}
	var waits []int
	ctx := poll.WithWaitTimeout(testctx.Bounded(t), time.Second)
	rep, err := Run(ctx, Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
		&lockedShard{s: &shard{first: 100, last: 1000, pageSize: 10}}, tg,
		Options{Apply: true, Waiting: func(_ Depth, remaining int, _, _ time.Duration) { waits = append(waits, remaining) }})
	var re *RemainingError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2, re.Remaining)
	assert.Equal(t, 2, rep.Remaining)
	assert.Equal(t, map[string]int{Replayed: 3}, rep.Counts)
	assert.NotEmpty(t, waits)
	assert.Equal(t, 2, waits[len(waits)-1])
}

// Interrupted before it starts: nothing taken, nothing changed.
func TestRunInterrupted(t *testing.T) {
	q := dlqOf(t, 3, time.Hour, nil)
	ctx, cancel := context.WithCancel(testctx.Bounded(t))
	cancel()
	tg := &memTarget{events: map[string]string{}, fail: map[string]bool{}}
	rep, err := Run(ctx, Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
		&lockedShard{s: &shard{first: 100, last: 1000, pageSize: 10}}, tg, Options{Apply: true})
	require.NoError(t, err)
	assert.Empty(t, rep.Outcomes)
	assert.Equal(t, 3, q.left())
	assert.Empty(t, tg.events)
}
