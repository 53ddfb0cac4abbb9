package redrive

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/dynops/dynops/internal/poll"
)

// QueueAttributes is the part of the SQS API ReadDepth uses.
type QueueAttributes interface {
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Depth is what SQS says a queue holds. Every message not yet deleted is in
// one of the three counts: a message a receive took is in flight (hidden)
// until it is deleted or its visibility timeout ends, also when the answer
// of that receive was lost on the way.
type Depth struct {
	Visible  int `json:"visible"`   // ApproximateNumberOfMessages
	InFlight int `json:"in_flight"` // ApproximateNumberOfMessagesNotVisible
	Delayed  int `json:"delayed"`   // ApproximateNumberOfMessagesDelayed
	// The queue's own VisibilityTimeout and DelaySeconds (0 when not read).
	VisibilityTimeout time.Duration `json:"-"`
	Delay             time.Duration `json:"-"`
}

// Total is every message the queue holds.
func (d Depth) Total() int { return d.Visible + d.InFlight + d.Delayed }

// Upto is how many messages a run that takes at most limit (0: no limit)
// expects to handle: the progress bar's total of `dlq redrive` and `dlq move`.
func (d Depth) Upto(limit int) int {
	if limit > 0 {
		return min(d.Total(), limit)
	}
	return d.Total()
}

func (d Depth) String() string {
	return fmt.Sprintf("%d visible, %d in flight, %d delayed", d.Visible, d.InFlight, d.Delayed)
}

// ReadDepth reads a queue's three counts; a missing or unreadable count is
// an error (never a count of 0).
func ReadDepth(ctx context.Context, c QueueAttributes, url string) (Depth, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameDelaySeconds,
	}})
	if err != nil {
		return Depth{}, fmt.Errorf("reading the depth of %s: %w", url, err)
	}
	return parseDepth(url, out.Attributes)
}

func parseDepth(url string, attrs map[string]string) (Depth, error) {
	var d Depth
	for _, f := range []struct {
		name types.QueueAttributeName
		into *int
	}{
		{types.QueueAttributeNameApproximateNumberOfMessages, &d.Visible},
		{types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, &d.InFlight},
		{types.QueueAttributeNameApproximateNumberOfMessagesDelayed, &d.Delayed},
	} {
		raw, ok := attrs[string(f.name)]
		if !ok {
			return Depth{}, fmt.Errorf("reading the depth of %s: SQS returned no %s", url, f.name)
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return Depth{}, fmt.Errorf("reading the depth of %s: %s is %q, not a count", url, f.name, raw)
		}
		*f.into = n
	}
	seconds := func(name types.QueueAttributeName) time.Duration {
		n, _ := strconv.Atoi(attrs[string(name)]) // optional: only the default wait bound uses them
		return time.Duration(n) * time.Second
	}
	d.VisibilityTimeout, d.Delay = seconds(types.QueueAttributeNameVisibilityTimeout), seconds(types.QueueAttributeNameDelaySeconds)
	return d, nil
}

// RemainingError says that a run ended with messages still in the source
// that it did not take. They are not lost: a re-run takes them.
type RemainingError struct {
	Queue string
	Depth Depth // the last depth read
	// Remaining is the messages of Depth the run did not hold itself.
	Remaining int
	Waited    time.Duration
	// Task is set when a message move task had completed.
	Task string
}

func (e *RemainingError) Error() string {
	how := fmt.Sprintf("after waiting %s for the messages in flight to come back", e.Waited.Round(time.Second))
	if e.Task != "" {
		how = "after move task " + e.Task + " completed"
	}
	return fmt.Sprintf("%d message(s) are still in %s (%s) %s: a message is in flight when a receive took it and its answer was lost, or another consumer holds it, "+
		"and it comes back when its visibility timeout ends; delayed ones when their delay ends. Nothing is lost, and the run does not claim them done: "+
		"run the same command again to move them (a re-run converges), or give it a longer --wait-timeout",
		e.Remaining, e.Queue, e.Depth, how)
}

// Verdicts of settle, after a receive brought nothing new.
type verdict int

const (
	settled      verdict = iota // nothing in the queue that the run does not hold: done
	receiveAgain                // messages are visible: receive
	keepWaiting                 // messages in flight or delayed: wait for them
)

// decide is the rule a run of dlq move or redrive ends by: it is done only
// when the queue holds no message the run does not hold itself (visible, in
// flight or delayed); held are the messages it took and neither deleted nor
// made visible again (they are in the counts, hidden by the run).
func decide(d Depth, held int) (verdict, int) {
	remaining := max(d.Total()-held, 0)
	switch {
	case remaining == 0:
		return settled, 0
	case d.Visible > 0:
		return receiveAgain, remaining
	}
	return keepWaiting, remaining
}

// waitBound is how long a run waits for messages in flight: the command's
// --wait-timeout, or else the longest a message can stay hidden or delayed
// (the run's own visibility timeout, the queue's, its delay) and a margin
// for SQS's approximate counts.
func waitBound(ctx context.Context, q Queue, d Depth) time.Duration {
	if t := poll.WaitTimeout(ctx); t > 0 {
		return t
	}
	return max(q.VisibilityTimeout, d.VisibilityTimeout) + d.Delay + 30*time.Second
}

// taker receives every message of a queue once and hands it to fresh; a
// message that comes back (its visibility timeout ended while the run held
// it, or its delete failed) goes to again with its new receipt handle. When
// a receive brings nothing new, it settles: done when decide says so, else
// it waits (poll.Until, bounded by waitBound) for the messages in flight to
// come back and receives them, or ends with a *RemainingError.
type taker struct {
	q   Queue
	max int // messages to take (0: all)
	// fresh handles a message the run had not seen. Every message of a
	// batch goes to fresh or again, also after an interrupt (a message
	// received is hidden: the run must hold it, to make it visible again).
	fresh func(types.Message)
	again func(types.Message)
	// held counts the messages the run holds hidden.
	held func() int
	// idle waits until no message the run took is still being worked on.
	idle func()
	// waiting is told each depth read while the run waits.
	waiting func(d Depth, remaining int, waited, bound time.Duration)
}

func (k *taker) run(ctx context.Context) error {
	seen := map[string]bool{}
	taken := 0
	var quiet time.Time // when the run began waiting (zero: not waiting)
	for ctx.Err() == nil && (k.max == 0 || taken < k.max) {
		want := 10
		if k.max > 0 {
			want = min(want, k.max-taken)
		}
		msgs, err := k.q.receive(ctx, want)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		n := 0
		for _, m := range msgs {
			id := aws.ToString(m.MessageId)
			if seen[id] {
				k.again(m)
				continue
			}
			seen[id] = true
			taken++
			n++
			k.fresh(m)
		}
		if n > 0 {
			quiet = time.Time{}
			continue
		}
		if quiet.IsZero() {
			quiet = time.Now()
		}
		done, err := k.settle(ctx, quiet)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// settle reads the queue's depth until decide says done (true) or receive
// (false), or the bound since quiet passes (*RemainingError).
func (k *taker) settle(ctx context.Context, quiet time.Time) (bool, error) {
	if k.idle != nil {
		k.idle()
	}
	var last Depth
	var v verdict
	var remaining int
	var bound time.Duration
	check := func(ctx context.Context) (bool, string, error) {
		d, err := ReadDepth(ctx, k.q.Client, k.q.URL)
		if err != nil {
			return false, "", err
		}
		last = d
		v, remaining = decide(d, k.held())
		if bound == 0 {
			bound = waitBound(ctx, k.q, d)
		}
		if v == keepWaiting && k.waiting != nil {
			k.waiting(d, remaining, time.Since(quiet), bound)
		}
		return v != keepWaiting, d.String(), nil
	}
	// The first check decides whether to wait at all, and the bound.
	done, _, err := check(ctx)
	left := bound - time.Since(quiet)
	switch {
	case err != nil:
		return false, err
	case v == settled:
		return true, nil
	case done && left > 0:
		return false, nil // receive again
	}
	if left > 0 {
		err := poll.Until(ctx, poll.Options{Interval: 500 * time.Millisecond, MaxInterval: 5 * time.Second, Timeout: left,
			What: fmt.Sprintf("the messages in flight in %s", k.q.URL)}, check)
		if err == nil {
			return v == settled, nil
		}
		if !errors.Is(err, poll.ErrTimeout) {
			if ctx.Err() != nil {
				return false, nil // interrupted: the caller says so
			}
			return false, err
		}
	}
	return false, &RemainingError{Queue: k.q.URL, Depth: last, Remaining: remaining, Waited: time.Since(quiet)}
}

// ledger is what a run holds: messages taken and not yet deleted or made
// visible again (by ID, with the latest receipt handle), and messages whose
// work was done but whose delete failed (to delete when they come back).
type ledger struct {
	mu        sync.Mutex
	holding   map[string]types.Message
	undeleted map[string]types.Message
	work      sync.WaitGroup // messages being worked on
}

func newLedger() *ledger {
	return &ledger{holding: map[string]types.Message{}, undeleted: map[string]types.Message{}}
}

func (l *ledger) take(m types.Message) {
	l.mu.Lock()
	l.holding[aws.ToString(m.MessageId)] = m
	l.mu.Unlock()
}

// gone: deleted.
func (l *ledger) gone(id string) {
	l.mu.Lock()
	delete(l.holding, id)
	delete(l.undeleted, id)
	l.mu.Unlock()
}

// notDeleted: done with, but the delete failed; it is in flight until its
// visibility timeout ends, and the run waits for it.
func (l *ledger) notDeleted(m types.Message) {
	l.mu.Lock()
	id := aws.ToString(m.MessageId)
	delete(l.holding, id)
	l.undeleted[id] = m
	l.mu.Unlock()
}

// back records a message that came back: its new receipt handle; whether
// it was one whose delete failed.
func (l *ledger) back(m types.Message) (undeleted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := aws.ToString(m.MessageId)
	if _, ok := l.undeleted[id]; ok {
		l.undeleted[id] = m
		return true
	}
	if _, ok := l.holding[id]; ok {
		l.holding[id] = m
	}
	return false
}

func (l *ledger) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.holding)
}

// held messages, with their latest receipt handles.
func (l *ledger) heldMessages() []types.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]types.Message, 0, len(l.holding))
	for _, m := range l.holding {
		out = append(out, m)
	}
	return out
}

// undeletedIDs are the messages whose delete failed and that did not come back.
func (l *ledger) undeletedIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.undeleted))
	for id := range l.undeleted {
		out = append(out, id)
	}
	return out
}
