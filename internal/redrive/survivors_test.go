package redrive

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/testctx"
)

// The wait for messages in flight: --wait-timeout, else the longest a
// message can stay hidden or delayed plus a margin.
func TestWaitBound(t *testing.T) {
	q := Queue{VisibilityTimeout: 40 * time.Second}
	cases := []struct {
		ctx  context.Context
		d    Depth
		want time.Duration
	}{
		{testctx.Bounded(t), Depth{VisibilityTimeout: 30 * time.Second, Delay: 5 * time.Second}, 40*time.Second + 5*time.Second + 30*time.Second},
		{testctx.Bounded(t), Depth{VisibilityTimeout: 90 * time.Second}, 90*time.Second + 30*time.Second},
		{testctx.Bounded(t), Depth{}, 40*time.Second + 30*time.Second},
		{poll.WithWaitTimeout(testctx.Bounded(t), 7*time.Second), Depth{VisibilityTimeout: 90 * time.Second, Delay: time.Minute}, 7 * time.Second},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, waitBound(c.ctx, q, c.d), "%+v", c.d)
	}
}

// A receive asks for at most what is left to take (1 to 10), with the run's
// visibility timeout in seconds, and long-polls a second.
func TestReceiveAsks(t *testing.T) {
	q := newMemQueue(25)
	rep, err := Move(testctx.Bounded(t), q, MoveOptions{Source: Queue{Client: q, URL: "src", VisibilityTimeout: 10 * time.Second}, Dest: "dst", Apply: true, Max: 12})
	require.NoError(t, err)
	assert.Equal(t, 12, rep.Moved, "--max 12 over two receives")
	assert.Equal(t, 13, q.left())
	require.Len(t, q.receives, 2)
	assert.Equal(t, []int32{10, 2}, []int32{q.receives[0].MaxNumberOfMessages, q.receives[1].MaxNumberOfMessages})
	for _, in := range q.receives {
		assert.Equal(t, int32(10), in.VisibilityTimeout)
		assert.Equal(t, int32(1), in.WaitTimeSeconds)
	}
}

// A long run with a short --wait-timeout still takes every message: the
// wait is measured from the first receive that brought nothing new, not
// from the start.
func TestLongRunShortWait(t *testing.T) {
	q := dlqOf(t, 25, time.Hour, nil)
	tg := &slowTarget{memTarget: memTarget{events: map[string]string{}, fail: map[string]bool{}}, delay: 40 * time.Millisecond}
	ctx := poll.WithWaitTimeout(testctx.Bounded(t), 300*time.Millisecond)
	rep, err := Run(ctx, Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
		&lockedShard{s: &shard{first: 100, last: 1000, pageSize: 10}}, tg, Options{Apply: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{Replayed: 25}, rep.Counts)
	assert.Zero(t, q.left())
}

type slowTarget struct {
	memTarget
	delay time.Duration
}

func (s *slowTarget) Deliver(ctx context.Context, rec onfailure.Record, event []byte) (string, error) {
	time.Sleep(s.delay)
	return s.memTarget.Deliver(ctx, rec, event)
}

// When the work in hand outlasts the wait bound, the run reads the depth
// once and ends: the bound counts from when the receives ran dry.
func TestWaitAlreadyPast(t *testing.T) {
	q := dlqOf(t, 3, time.Hour, nil)
	q.hideByOther(1, time.Minute)
	tg := &slowTarget{memTarget: memTarget{events: map[string]string{}, fail: map[string]bool{}}, delay: 300 * time.Millisecond}
	var mu sync.Mutex
	var waits []int
	ctx := poll.WithWaitTimeout(testctx.Bounded(t), 200*time.Millisecond)
	rep, err := Run(ctx, Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second},
		&lockedShard{s: &shard{first: 100, last: 1000, pageSize: 10}}, tg,
		Options{Apply: true, Waiting: func(_ Depth, remaining int, _, _ time.Duration) {
			mu.Lock()
			waits = append(waits, remaining)
			mu.Unlock()
		}})
	var re *RemainingError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 1, rep.Remaining)
	assert.Equal(t, []int{1}, waits, "one depth read, no wait past the bound")
}

// GetRecords pages are the batch's size when it has one under the API's
// maximum of 1,000; otherwise the service's default.
func TestReadBatchPageLimit(t *testing.T) {
	for size, want := range map[int]*int32{0: nil, 1: aws.Int32(1), 3: aws.Int32(3), 999: aws.Int32(999), 1000: nil, 10000: nil} {
		s := &shard{first: 100, last: 200, pageSize: 10}
		b := batch(100, 102)
		b.BatchSize = size
		_, err := ReadBatch(testctx.Bounded(t), s, b)
		require.NoError(t, err)
		require.NotEmpty(t, s.limits)
		assert.Equal(t, want, s.limits[0], "batch size %d", size)
	}
}

// Release makes every message visible again, ten at a time (the API's
// batch size), and says when SQS refused some.
func TestRelease(t *testing.T) {
	for _, n := range []int{0, 1, 10, 11, 25} {
		q := newMemQueue(n)
		var msgs []types.Message
		q.mu.Lock()
		for _, m := range q.msgs {
			msgs = append(msgs, q.hide(m, 600))
		}
		q.mu.Unlock()
		require.NoError(t, Queue{Client: q, URL: "q"}.release(testctx.Bounded(t), msgs), "%d messages", n)
		q.mu.Lock()
		for _, m := range q.msgs {
			assert.False(t, time.Now().Before(m.visibleAt), "%s visible again", m.id)
		}
		q.mu.Unlock()
	}
	f := &failingRelease{memQueue: newMemQueue(0)}
	err := Queue{Client: f, URL: "q"}.release(testctx.Bounded(t), []types.Message{{ReceiptHandle: aws.String("h")}})
	assert.ErrorContains(t, err, "making 1 message(s) visible again in q failed: ReceiptHandleIsInvalid")
}

type failingRelease struct{ *memQueue }

func (f *failingRelease) ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	return &sqs.ChangeMessageVisibilityBatchOutput{Failed: []types.BatchResultErrorEntry{{Id: aws.String("0"), Message: aws.String("ReceiptHandleIsInvalid")}}}, nil
}

func TestSentAt(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := types.Message{Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(at.UnixMilli(), 10)}}
	assert.Equal(t, at, sentAt(m))
	assert.True(t, sentAt(types.Message{}).IsZero(), "not said: zero")
	assert.True(t, sentAt(types.Message{Attributes: map[string]string{"SentTimestamp": "x"}}).IsZero())
}

// Interrupting a move: by copy, it says how many it moved; with a task, it
// says the task goes on.
func TestMoveInterrupted(t *testing.T) {
	t.Run("copy", func(t *testing.T) {
		q := newMemQueue(8)
		ctx, cancel := context.WithCancel(testctx.Bounded(t))
		defer cancel()
		rep, err := Move(ctx, q, MoveOptions{Source: Queue{Client: q, URL: "src", VisibilityTimeout: 10 * time.Second}, Dest: "dst", Apply: true,
			Progress: func(moved int) {
				if moved == 3 {
					cancel()
				}
			}})
		assert.ErrorContains(t, err, "interrupted after moving 3 message(s)")
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 3, rep.Moved)
		assert.Equal(t, 5, q.left())
	})
	t.Run("task", func(t *testing.T) {
		f := newFake()
		f.statuses = []types.ListMessageMoveTasksResultEntry{status("handle-1", "RUNNING", 1)}
		ctx, cancel := context.WithCancel(testctx.Bounded(t))
		defer cancel()
		_, err := Move(ctx, f, MoveOptions{Source: Queue{Client: f, URL: srcURL}, Dest: destURL, Apply: true, Poll: time.Millisecond,
			Progress: func(int) { cancel() }})
		assert.ErrorContains(t, err, "stopped watching move task handle-1 (it goes on; dynops dlq move does not cancel it)")
	})
}

// The move task probe: only "the service lacks it" or a transient error
// falls back to receive/send/delete.
func TestMoveProbeOtherHTTPErrors(t *testing.T) {
	for _, code := range []int{400, 403, 404} {
		f := newFake()
		f.listErr = httpErr(code)
		_, err := Move(testctx.Bounded(t), f, MoveOptions{Source: Queue{Client: f, URL: srcURL}, Dest: destURL, Poll: time.Millisecond})
		assert.ErrorContains(t, err, "ListMessageMoveTasks on arn:aws:sqs:eu-west-1:123456789012:dev-hoge-user-dlq", "HTTP %d", code)
	}
}

// A task listed alone is the one started, whatever handle it is listed
// under; listed with others, only its own handle counts.
func TestMoveTaskListedAlone(t *testing.T) {
	f := newFake()
	f.statuses = []types.ListMessageMoveTasksResultEntry{status("listed-otherwise", "COMPLETED", 7)}
	ctx := poll.WithWaitTimeout(testctx.Bounded(t), 5*time.Second) // skipped, it would never complete
	rep, err := Move(ctx, f, MoveOptions{Source: Queue{Client: f, URL: srcURL}, Dest: destURL, Apply: true, Poll: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, "COMPLETED", rep.TaskStatus)
	assert.Equal(t, 7, rep.Moved)
}

// A wait that ends settled ends the run: no receive after it (each costs a
// second of long polling).
func TestSettledWaitEndsTheRun(t *testing.T) {
	q := newMemQueue(3)
	q.hideByOther(1, time.Minute)
	go func() {
		time.Sleep(300 * time.Millisecond)
		q.mu.Lock()
		q.msgs[0].deleted = true // the other consumer deletes it
		q.mu.Unlock()
	}()
	rep, err := Move(testctx.Bounded(t), q, MoveOptions{Source: Queue{Client: q, URL: "src", VisibilityTimeout: 10 * time.Second}, Dest: "dst", Apply: true})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Moved)
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Len(t, q.receives, 2, "one receive that took the messages, one that found none")
}
