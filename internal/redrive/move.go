package redrive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/poll"
)

// MoveAPI is the SQS API `dynops dlq move` uses.
type MoveAPI interface {
	SQS
	StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
}

// Move methods.
const (
	MethodMoveTask = "message-move-task"   // SQS moves the messages itself (StartMessageMoveTask)
	MethodCopy     = "receive-send-delete" // dynops moves them: delete only after the send succeeded
)

// MoveOptions of a move from a plain SQS DLQ.
type MoveOptions struct {
	Source Queue
	// Dest is the queue URL to move to; "" means each message's original
	// source queue (only a message move task can do that).
	Dest  string
	Apply bool
	// Max bounds the messages moved (0: all); it needs receive/send/delete.
	Max  int
	Poll time.Duration // how often a move task's progress is read (default 2 s)
	Act  func(what, target string, detail any)
	// Progress is told the messages moved so far.
	Progress func(moved int)
	// Waiting is told, while the run waits for messages in flight to come
	// back, the source's depth, how many of them the run does not hold, the
	// time waited and its bound.
	Waiting func(d Depth, remaining int, waited, bound time.Duration)
}

// MoveReport is the result of a move.
type MoveReport struct {
	Source         string `json:"source"`
	Dest           string `json:"dest"`
	DryRun         bool   `json:"dry_run"`
	Method         string `json:"method"`
	FallbackReason string `json:"fallback_reason,omitempty"`
	Visible        int    `json:"visible_messages"` // in the source when the move began
	TaskHandle     string `json:"task_handle,omitempty"`
	TaskStatus     string `json:"task_status,omitempty"`
	Moved          int    `json:"moved"`
	Kept           int    `json:"kept"`
	// Remaining is the messages still in the source that the run did not
	// take (in flight or delayed when its wait ended); a re-run moves them.
	Remaining int      `json:"remaining"`
	Errors    []string `json:"errors,omitempty"`
}

// Move moves a plain SQS DLQ's messages to Dest. It uses StartMessageMoveTask
// where the service has it (SQS does the move), and otherwise moves each
// message itself: receive, send to Dest, and delete from the source only after
// the send succeeded (a message is never lost; if interrupted between send and
// delete it is in both queues, at-least-once). A dry run says which method it
// would use and how many messages are waiting; ListMessageMoveTasks tells,
// without changing anything, whether the service has message move tasks.
func Move(ctx context.Context, c MoveAPI, o MoveOptions) (MoveReport, error) {
	if o.Act == nil {
		o.Act = func(string, string, any) {}
	}
	if o.Poll == 0 {
		o.Poll = 2 * time.Second
	}
	rep := MoveReport{Source: o.Source.URL, Dest: o.Dest, DryRun: !o.Apply}
	srcArn, visible, err := queueInfo(ctx, c, o.Source.URL)
	if err != nil {
		return rep, err
	}
	rep.Visible = visible
	destArn := ""
	if o.Dest != "" {
		if destArn, _, err = queueInfo(ctx, c, o.Dest); err != nil {
			return rep, err
		}
	}

	rep.Method = MethodMoveTask
	if o.Max > 0 {
		rep.Method, rep.FallbackReason = MethodCopy, "--max needs receive/send/delete (a message move task moves everything)"
	} else if _, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &srcArn}, noRetry); err != nil {
		switch {
		case moveTasksUnavailable(err):
			rep.Method, rep.FallbackReason = MethodCopy, "the service has no message move tasks here ("+shortErr(err)+")"
		case awsconfig.Retryer(0).IsErrorRetryable(err):
			// Throttled or dropped: the probe is not retried (see noRetry),
			// and receive/send/delete is as safe.
			rep.Method, rep.FallbackReason = MethodCopy, "the message move task probe failed transiently ("+shortErr(err)+")"
		default:
			return rep, fmt.Errorf("ListMessageMoveTasks on %s: %w", srcArn, err)
		}
	}
	if rep.Method == MethodCopy && o.Dest == "" {
		return rep, fmt.Errorf("%s; moving with receive/send/delete needs a destination: pass --to-queue URL", rep.FallbackReason)
	}
	if !o.Apply {
		o.Act(audit.ActDLQWouldMove, o.Source.URL, map[string]any{"dest": o.Dest, "method": rep.Method, "visible": visible})
		return rep, nil
	}
	if rep.Method == MethodMoveTask {
		return moveWithTask(ctx, c, o, srcArn, destArn, rep)
	}
	return moveByCopy(ctx, c, o, rep)
}

func moveWithTask(ctx context.Context, c MoveAPI, o MoveOptions, srcArn, destArn string, rep MoveReport) (MoveReport, error) {
	in := &sqs.StartMessageMoveTaskInput{SourceArn: &srcArn}
	if destArn != "" {
		in.DestinationArn = &destArn
	}
	out, err := c.StartMessageMoveTask(ctx, in)
	if err != nil {
		return rep, fmt.Errorf("StartMessageMoveTask on %s: %w", srcArn, err)
	}
	rep.TaskHandle = aws.ToString(out.TaskHandle)
	o.Act(audit.ActDLQMoveTask, o.Source.URL, map[string]any{"dest": o.Dest, "task_handle": rep.TaskHandle})
	err = poll.Until(ctx, poll.Options{Interval: o.Poll, What: "move task " + rep.TaskHandle,
		Resume: "it goes on in SQS (dynops dlq move does not cancel it); watch it with `aws sqs list-message-move-tasks --source-arn " + srcArn + "`"},
		func(ctx context.Context) (bool, string, error) {
			tasks, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &srcArn})
			if err != nil {
				return false, "", fmt.Errorf("reading the move task's progress (it goes on without dynops; handle %s): %w", rep.TaskHandle, err)
			}
			for _, t := range tasks.Results {
				if aws.ToString(t.TaskHandle) != rep.TaskHandle && len(tasks.Results) > 1 {
					continue
				}
				rep.TaskStatus, rep.Moved = aws.ToString(t.Status), int(t.ApproximateNumberOfMessagesMoved)
				if o.Progress != nil {
					o.Progress(rep.Moved)
				}
				switch rep.TaskStatus {
				case "COMPLETED":
					return true, rep.TaskStatus, nil
				case "FAILED", "CANCELLED":
					return false, rep.TaskStatus, fmt.Errorf("move task %s: %s %s", rep.TaskHandle, rep.TaskStatus, aws.ToString(t.FailureReason))
				}
			}
			return false, rep.TaskStatus, nil
		})
	if err != nil && ctx.Err() != nil {
		return rep, fmt.Errorf("stopped watching move task %s (it goes on; dynops dlq move does not cancel it): %w", rep.TaskHandle, err)
	}
	if err != nil {
		return rep, err
	}
	// A task moves the messages visible to it; one in flight (a receive whose
	// answer was lost, another consumer) or delayed stays behind. Done is
	// what the source says, not the task's status.
	d, err := ReadDepth(ctx, c, o.Source.URL)
	if err != nil {
		return rep, fmt.Errorf("move task %s %s; reading what is left in the source: %w", rep.TaskHandle, rep.TaskStatus, err)
	}
	if d.Total() > 0 {
		rep.Remaining = d.Total()
		return rep, &RemainingError{Queue: o.Source.URL, Depth: d, Remaining: d.Total(), Task: rep.TaskHandle}
	}
	return rep, nil
}

// moveByCopy moves each message itself. It ends only when the source holds
// no message it did not move (or keep): a message whose receive answer was
// lost is in flight until its visibility timeout ends, and the run waits for
// it (taker); a message sent whose delete failed is deleted when it comes
// back. If the wait passes its bound, the run ends with a *RemainingError.
func moveByCopy(ctx context.Context, c MoveAPI, o MoveOptions, rep MoveReport) (MoveReport, error) {
	l := newLedger()
	defer func() { _ = o.Source.release(context.WithoutCancel(ctx), l.heldMessages()) }()
	fifo := strings.HasSuffix(o.Dest, ".fifo")
	kept := map[string]string{}      // message ID -> why it was kept (its send failed)
	undeleted := map[string]string{} // message ID -> the failed delete
	moved := func(id string) {
		rep.Moved++
		o.Act(audit.ActDLQMove, id, map[string]string{"from": o.Source.URL, "to": o.Dest})
		if o.Progress != nil {
			o.Progress(rep.Moved)
		}
	}
	del := func(m types.Message) {
		id := aws.ToString(m.MessageId)
		if err := o.Source.delete(ctx, m); err != nil {
			l.notDeleted(m)
			undeleted[id] = fmt.Sprintf("message %s sent but not deleted (it will be in both queues): %v", id, err)
			return
		}
		l.gone(id)
		delete(undeleted, id)
		moved(id)
	}
	k := &taker{q: o.Source, max: o.Max, held: l.held, waiting: o.Waiting,
		fresh: func(m types.Message) {
			id := aws.ToString(m.MessageId)
			l.take(m)
			if ctx.Err() != nil {
				return // interrupted: held, made visible again at the end
			}
			in := &sqs.SendMessageInput{QueueUrl: &o.Dest, MessageBody: m.Body, MessageAttributes: m.MessageAttributes}
			if fifo {
				group := m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
				if group == "" {
					group = "dynops-dlq-move"
				}
				in.MessageGroupId, in.MessageDeduplicationId = &group, &id
			}
			if _, err := c.SendMessage(ctx, in); err != nil {
				rep.Kept++
				kept[id] = fmt.Sprintf("message %s kept: sending to %s: %v", id, o.Dest, err)
				return
			}
			del(m)
		},
		again: func(m types.Message) {
			if l.back(m) {
				del(m) // sent before; its delete failed: delete it now
			}
		},
	}
	err := k.run(ctx)
	if err == nil && ctx.Err() == nil {
		// Settled: the source holds no message the run does not hold, so a
		// message whose delete answer was lost is gone from it.
		for _, id := range l.undeletedIDs() {
			l.gone(id)
			delete(undeleted, id)
			moved(id)
		}
	}
	for _, m := range sortedValues(kept) {
		rep.Errors = append(rep.Errors, m)
	}
	for _, m := range sortedValues(undeleted) {
		rep.Errors = append(rep.Errors, m)
	}
	var re *RemainingError
	if errors.As(err, &re) {
		rep.Remaining = re.Remaining
	}
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("interrupted after moving %d message(s): the messages taken and not moved are visible again; run the same command again to go on: %w", rep.Moved, context.Cause(ctx))
	}
	return rep, err
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func queueInfo(ctx context.Context, c MoveAPI, url string) (arn string, visible int, err error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn, types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		return "", 0, fmt.Errorf("reading queue %s: %w", url, err)
	}
	return parseQueueInfo(url, out.Attributes)
}

// parseQueueInfo reads QueueArn and ApproximateNumberOfMessages; a missing or
// unreadable attribute is an error (never a count of 0).
func parseQueueInfo(url string, attrs map[string]string) (arn string, visible int, err error) {
	name := string(types.QueueAttributeNameApproximateNumberOfMessages)
	raw, ok := attrs[name]
	if !ok {
		return "", 0, fmt.Errorf("reading queue %s: SQS returned no %s", url, name)
	}
	if visible, err = strconv.Atoi(raw); err != nil || visible < 0 {
		return "", 0, fmt.Errorf("reading queue %s: %s is %q, not a count", url, name, raw)
	}
	arn = attrs[string(types.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", 0, fmt.Errorf("reading queue %s: SQS returned no QueueArn", url)
	}
	return arn, visible, nil
}

// noRetry makes the availability probe answer at once: falling back on a
// transient error is safe (receive/send/delete loses nothing), waiting on
// retried 500s from a service that lacks the API is not useful.
func noRetry(o *sqs.Options) { o.RetryMaxAttempts = 1 }

// moveTasksUnavailable tells an API the service lacks (moto answers 500; some
// endpoints say UnsupportedOperation or InvalidAction) from other errors.
func moveTasksUnavailable(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusInternalServerError || re.HTTPStatusCode() == http.StatusNotImplemented) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", "InvalidAction", "NotImplemented":
			return true
		}
	}
	return false
}

func shortErr(err error) string {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("ListMessageMoveTasks answered HTTP %d", re.HTTPStatusCode())
	}
	return err.Error()
}
