package redrive

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/testctx"
)

// The rule a run ends by: done only when the queue holds nothing the run
// does not hold itself, whatever the mix of visible, in flight and delayed.
func TestDecide(t *testing.T) {
	cases := []struct {
		d         Depth
		held      int
		want      verdict
		remaining int
	}{
		{Depth{}, 0, settled, 0},
		{Depth{InFlight: 3}, 3, settled, 0},                  // only the run's own kept messages
		{Depth{Visible: 1, InFlight: 2}, 3, settled, 0},      // a kept one came back visible
		{Depth{InFlight: 2}, 5, settled, 0},                  // counts lag behind deletes: never negative
		{Depth{InFlight: 1}, 0, keepWaiting, 1},              // a receive whose answer was lost
		{Depth{InFlight: 4}, 3, keepWaiting, 1},              // one more than the run holds
		{Depth{Delayed: 2}, 0, keepWaiting, 2},               // delayed messages are not done
		{Depth{InFlight: 1, Delayed: 1}, 0, keepWaiting, 2},  // both
		{Depth{Visible: 1}, 0, receiveAgain, 1},              // arrived since the last receive
		{Depth{Visible: 2, InFlight: 5}, 1, receiveAgain, 6}, // visible first, then wait
		{Depth{Visible: 1, Delayed: 9}, 0, receiveAgain, 10}, // visible first
		{Depth{Visible: 0, InFlight: 0, Delayed: 1}, 1, settled, 0},
	}
	for _, c := range cases {
		v, n := decide(c.d, c.held)
		assert.Equal(t, c.want, v, "%s, %d held", c.d, c.held)
		assert.Equal(t, c.remaining, n, "%s, %d held", c.d, c.held)
	}
}

func TestParseDepth(t *testing.T) {
	full := map[string]string{"ApproximateNumberOfMessages": "1", "ApproximateNumberOfMessagesNotVisible": "2", "ApproximateNumberOfMessagesDelayed": "3", "VisibilityTimeout": "30", "DelaySeconds": "5"}
	d, err := parseDepth("q", full)
	require.NoError(t, err)
	assert.Equal(t, Depth{Visible: 1, InFlight: 2, Delayed: 3, VisibilityTimeout: 30 * time.Second, Delay: 5 * time.Second}, d)
	for _, name := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		for _, bad := range []string{"", "x", "-1", "<missing>"} {
			a := map[string]string{}
			for k, v := range full {
				a[k] = v
			}
			if bad == "<missing>" {
				delete(a, name)
			} else {
				a[name] = bad
			}
			_, err := parseDepth("q", a)
			assert.ErrorContains(t, err, name, "an unreadable count is an error, never 0 (%s=%q)", name, bad)
		}
	}
}

// memQueue is an SQS queue in memory with visibility timeouts (scaled: one
// second of VisibilityTimeout is `second`), a destination queue, and the
// faults the proxy injects, as the run sees them after the SDK's retries.
type memQueue struct {
	mu     sync.Mutex
	second time.Duration
	msgs   []*memMsg
	sent   []string // bodies sent to the destination
	// loseReceives: the next N receives that find messages hide them and
	// lose the answer; the SDK's retry then receives the next ones.
	loseReceives int
	// loseDeleteAnswer: deletes of these bodies happen, their answer is lost (error).
	loseDeleteAnswer map[string]bool
	// failDelete: deletes of these bodies fail once (nothing deleted).
	failDelete map[string]bool
	// failSend: sends of these bodies fail.
	failSend map[string]bool
	// receives: the inputs of every receive.
	receives []sqs.ReceiveMessageInput
}

type memMsg struct {
	id, body  string
	handle    int
	visibleAt time.Time
	deleted   bool
}

// maxReceives is more receives than any test's run needs: a run that goes
// past it loops without end, and fails instead of hanging the package.
const maxReceives = 10000

func newMemQueue(n int) *memQueue {
	q := &memQueue{second: 100 * time.Millisecond, loseDeleteAnswer: map[string]bool{}, failDelete: map[string]bool{}, failSend: map[string]bool{}}
	for i := range n {
		q.msgs = append(q.msgs, &memMsg{id: fmt.Sprintf("id-%02d", i), body: fmt.Sprintf("m%02d", i)})
	}
	return q
}

func (q *memQueue) hide(m *memMsg, vt int32) types.Message {
	m.handle++
	m.visibleAt = time.Now().Add(time.Duration(vt) * q.second)
	return types.Message{MessageId: aws.String(m.id), Body: aws.String(m.body), ReceiptHandle: aws.String(fmt.Sprintf("%s#%d", m.id, m.handle))}
}

func (q *memQueue) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.receives) >= maxReceives {
		return nil, fmt.Errorf("the fake SQS: %d receives from one queue, a loop that never ends", maxReceives)
	}
	q.receives = append(q.receives, *in)
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 {
		return nil, fmt.Errorf("InvalidParameterValue: MaxNumberOfMessages %d (1 to 10)", in.MaxNumberOfMessages)
	}
	take := func() []types.Message {
		var out []types.Message
		for _, m := range q.msgs {
			if !m.deleted && time.Now().After(m.visibleAt) && len(out) < int(in.MaxNumberOfMessages) {
				out = append(out, q.hide(m, in.VisibilityTimeout))
			}
		}
		return out
	}
	out := take()
	for len(out) > 0 && q.loseReceives > 0 {
		q.loseReceives--
		out = take()
	}
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}

func (q *memQueue) find(handle string) *memMsg {
	for _, m := range q.msgs {
		if fmt.Sprintf("%s#%d", m.id, m.handle) == handle {
			return m
		}
	}
	return nil
}

func (q *memQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.find(aws.ToString(in.ReceiptHandle))
	if m == nil {
		return nil, errors.New("ReceiptHandleIsInvalid")
	}
	if q.failDelete[m.body] {
		delete(q.failDelete, m.body)
		return nil, errors.New("injected: delete failed")
	}
	m.deleted = true
	if q.loseDeleteAnswer[m.body] {
		delete(q.loseDeleteAnswer, m.body)
		return nil, errors.New("injected: the delete's answer was lost")
	}
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *memQueue) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	// As SQS: 1 to 10 entries.
	if len(in.Entries) == 0 {
		return nil, errors.New("AWS.SimpleQueueService.EmptyBatchRequest")
	}
	if len(in.Entries) > 10 {
		return nil, errors.New("AWS.SimpleQueueService.TooManyEntriesInBatchRequest")
	}
	for _, e := range in.Entries {
		if m := q.find(aws.ToString(e.ReceiptHandle)); m != nil {
			m.visibleAt = time.Now().Add(time.Duration(e.VisibilityTimeout) * q.second)
		}
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func (q *memQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failSend[aws.ToString(in.MessageBody)] {
		return nil, errors.New("injected: send failed")
	}
	q.sent = append(q.sent, aws.ToString(in.MessageBody))
	return &sqs.SendMessageOutput{}, nil
}

func (q *memQueue) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	vis, hidden := 0, 0
	for _, m := range q.msgs {
		switch {
		case m.deleted:
		case time.Now().After(m.visibleAt):
			vis++
		default:
			hidden++
		}
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"QueueArn": "arn:aws:sqs:eu-west-1:123456789012:" + aws.ToString(in.QueueUrl),
		"ApproximateNumberOfMessages": fmt.Sprint(vis), "ApproximateNumberOfMessagesNotVisible": fmt.Sprint(hidden), "ApproximateNumberOfMessagesDelayed": "0"}}, nil
}

func (q *memQueue) StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	return nil, errors.New("not used")
}

func (q *memQueue) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	return nil, httpErr(500) // as moto: move with receive/send/delete
}

func (q *memQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, m := range q.msgs {
		if !m.deleted {
			n++
		}
	}
	return n
}

func (q *memQueue) distinctSent() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	seen := map[string]bool{}
	for _, b := range q.sent {
		seen[b] = true
	}
	return len(seen)
}

// hideByOther: another consumer (or a lost receive of an earlier run)
// holds the first n messages for d.
func (q *memQueue) hideByOther(n int, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.msgs[:n] {
		m.handle++
		m.visibleAt = time.Now().Add(d)
	}
}

// Move ends only when the source holds nothing it did not move: each case
// is a way messages are out of reach when the receives run dry.
func TestMoveWaitsForMessagesInFlight(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(q *memQueue)
		wait    time.Duration // --wait-timeout (0: the default bound)
		wantErr string        // a RemainingError
		moved   int
		kept    int
		errs    int // report lines
	}{
		{name: "no fault", moved: 25},
		{name: "receives whose answer was lost (the chaos cell)", setup: func(q *memQueue) { q.loseReceives = 3 }, moved: 25},
		{name: "held by another consumer, back within the wait", setup: func(q *memQueue) { q.hideByOther(4, 700*time.Millisecond) }, moved: 25},
		{name: "a delete that failed: deleted when it comes back, not sent twice", setup: func(q *memQueue) { q.failDelete["m03"], q.failDelete["m17"] = true, true }, moved: 25},
		{name: "a delete whose answer was lost: gone from the source, counted moved", setup: func(q *memQueue) { q.loseDeleteAnswer["m05"] = true }, moved: 25},
		{name: "a send that failed is kept, not waited for", setup: func(q *memQueue) { q.failSend["m07"] = true }, moved: 24, kept: 1, errs: 1},
		{name: "held longer than --wait-timeout: stops, says how many", setup: func(q *memQueue) { q.hideByOther(6, time.Minute) }, wait: time.Second,
			moved: 19, wantErr: "6 message(s) are still in src (0 visible, 6 in flight, 0 delayed) after waiting"},
		{name: "lost receives and a short --wait-timeout: stops, says how many", setup: func(q *memQueue) { q.second = time.Minute / 10; q.loseReceives = 2 }, wait: time.Second,
			moved: 5, wantErr: "20 message(s) are still in src"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q := newMemQueue(25)
			if c.setup != nil {
				c.setup(q)
			}
			ctx := poll.WithWaitTimeout(testctx.Bounded(t), c.wait)
			var waits []int
			rep, err := Move(ctx, q, MoveOptions{Source: Queue{Client: q, URL: "src", VisibilityTimeout: 10 * time.Second}, Dest: "dst", Apply: true,
				Waiting: func(_ Depth, remaining int, _, _ time.Duration) { waits = append(waits, remaining) }})
			if c.wantErr != "" {
				var re *RemainingError
				require.ErrorAs(t, err, &re)
				assert.ErrorContains(t, err, c.wantErr)
				assert.ErrorContains(t, err, "a re-run converges")
				assert.Equal(t, re.Remaining, rep.Remaining)
				assert.NotEmpty(t, waits, "the wait shows progress")
				// The re-run, once they are back, converges.
				q.mu.Lock()
				for _, m := range q.msgs {
					m.visibleAt = time.Time{}
				}
				q.loseReceives = 0
				q.mu.Unlock()
				rep2, err := Move(testctx.Bounded(t), q, MoveOptions{Source: Queue{Client: q, URL: "src", VisibilityTimeout: 10 * time.Second}, Dest: "dst", Apply: true})
				require.NoError(t, err, "the re-run")
				assert.Equal(t, 25, rep.Moved+rep2.Moved)
			} else {
				require.NoError(t, err)
				assert.Equal(t, c.moved, rep.Moved)
			}
			assert.Equal(t, c.kept, rep.Kept)
			if c.wantErr == "" {
				assert.Len(t, rep.Errors, c.errs, "%v", rep.Errors)
				assert.Equal(t, c.kept, q.left(), "only kept messages stay in the source")
				assert.Equal(t, c.moved, q.distinctSent())
			} else {
				assert.Zero(t, q.left())
				assert.Equal(t, 25, q.distinctSent())
			}
			if c.name == "a delete that failed: deleted when it comes back, not sent twice" {
				assert.Len(t, q.sent, 25, "no message sent twice")
			}
		})
	}
}

// TestDepthUpto: the messages a run expects to handle are all the queue
// holds (visible, in flight and delayed), capped by --max when it is set.
func TestDepthUpto(t *testing.T) {
	d := Depth{Visible: 5, InFlight: 2, Delayed: 1}
	for _, tc := range []struct{ max, want int }{{0, 8}, {-1, 8}, {1, 1}, {7, 7}, {8, 8}, {9, 8}, {100, 8}} {
		if got := d.Upto(tc.max); got != tc.want {
			t.Errorf("Upto(%d) = %d, want %d", tc.max, got, tc.want)
		}
	}
	if got := (Depth{}).Upto(0); got != 0 {
		t.Errorf("an empty queue: Upto(0) = %d, want 0", got)
	}
}
