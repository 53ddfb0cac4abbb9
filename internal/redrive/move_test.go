package redrive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSQS is the SQS API at the SDK interface, for the decision logic of
// Move (the message-move-task path runs only on real AWS: moto answers 500).
type fakeSQS struct {
	attrs     map[string]map[string]string // queue URL -> attributes
	listErr   error                        // ListMessageMoveTasks before the task starts
	statuses  []types.ListMessageMoveTasksResultEntry
	others    []types.ListMessageMoveTasksResultEntry // tasks of other handles, listed too
	started   *sqs.StartMessageMoveTaskInput
	listCalls int
	received  int
	left      int // messages in flight once the move ran
}

func (f *fakeSQS) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	a, ok := f.attrs[aws.ToString(in.QueueUrl)]
	if !ok {
		return nil, &types.QueueDoesNotExist{Message: aws.String("no such queue")}
	}
	out := map[string]string{"ApproximateNumberOfMessagesNotVisible": "0", "ApproximateNumberOfMessagesDelayed": "0"}
	for k, v := range a {
		out[k] = v
	}
	if f.received > 0 || f.started != nil {
		// The run took them: what is left is f.left (in flight).
		out["ApproximateNumberOfMessages"], out["ApproximateNumberOfMessagesNotVisible"] = "0", fmt.Sprint(f.left)
	}
	return &sqs.GetQueueAttributesOutput{Attributes: out}, nil
}

func (f *fakeSQS) StartMessageMoveTask(_ context.Context, in *sqs.StartMessageMoveTaskInput, _ ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	f.started = in
	return &sqs.StartMessageMoveTaskOutput{TaskHandle: aws.String("handle-1")}, nil
}

func (f *fakeSQS) ListMessageMoveTasks(ctx context.Context, _ *sqs.ListMessageMoveTasksInput, _ ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	f.listCalls++
	if f.started == nil {
		if f.listErr != nil {
			return nil, f.listErr
		}
		return &sqs.ListMessageMoveTasksOutput{}, nil
	}
	i := min(f.listCalls-2, len(f.statuses)-1)
	res := append([]types.ListMessageMoveTasksResultEntry{}, f.others...)
	return &sqs.ListMessageMoveTasksOutput{Results: append(res, f.statuses[i])}, nil
}

func (f *fakeSQS) ReceiveMessage(ctx context.Context, _ *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	f.received++
	return &sqs.ReceiveMessageOutput{}, nil
}

func (f *fakeSQS) DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	return &sqs.DeleteMessageOutput{}, nil
}

func (f *fakeSQS) ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func (f *fakeSQS) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return &sqs.SendMessageOutput{}, nil
}

const (
	srcURL  = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-hoge-user-dlq"
	destURL = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-hoge-user-redrive"
)

func newFake() *fakeSQS {
	return &fakeSQS{attrs: map[string]map[string]string{
		srcURL:  {"QueueArn": "arn:aws:sqs:eu-west-1:123456789012:dev-hoge-user-dlq", "ApproximateNumberOfMessages": "7"},
		destURL: {"QueueArn": "arn:aws:sqs:eu-west-1:123456789012:dev-hoge-user-redrive", "ApproximateNumberOfMessages": "0"},
	}}
}

func status(handle, s string, moved int64) types.ListMessageMoveTasksResultEntry {
	return types.ListMessageMoveTasksResultEntry{TaskHandle: aws.String(handle), Status: aws.String(s), ApproximateNumberOfMessagesMoved: moved,
		FailureReason: aws.String("reason-" + s)}
}

func httpErr(code int) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("boom")}}
}

func TestMoveDecisions(t *testing.T) {
	cases := []struct {
		name       string
		dest       string
		apply      bool
		max        int
		listErr    error
		statuses   []types.ListMessageMoveTasksResultEntry
		others     []types.ListMessageMoveTasksResultEntry
		method     string
		started    bool
		wantErr    string
		moved      int
		taskStatus string
		left       int
	}{
		{name: "dry run with move tasks starts nothing", dest: destURL, method: MethodMoveTask},
		{name: "move task to dest runs until COMPLETED", dest: destURL, apply: true, method: MethodMoveTask, started: true,
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "RUNNING", 3), status("handle-1", "COMPLETED", 7)}, moved: 7, taskStatus: "COMPLETED"},
		{name: "move task back to the original sources (no dest)", apply: true, method: MethodMoveTask, started: true,
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "COMPLETED", 7)}, moved: 7, taskStatus: "COMPLETED"},
		{name: "another task's status is not ours", dest: destURL, apply: true, method: MethodMoveTask, started: true,
			others:   []types.ListMessageMoveTasksResultEntry{status("old-handle", "FAILED", 0)},
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "COMPLETED", 7)}, moved: 7, taskStatus: "COMPLETED"},
		{name: "FAILED task is an error with its reason", dest: destURL, apply: true, method: MethodMoveTask, started: true,
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "FAILED", 2)}, wantErr: "FAILED reason-FAILED", moved: 2, taskStatus: "FAILED"},
		{name: "CANCELLED task is an error", dest: destURL, apply: true, method: MethodMoveTask, started: true,
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "CANCELLED", 0)}, wantErr: "CANCELLED", taskStatus: "CANCELLED"},
		{name: "500 from ListMessageMoveTasks falls back to copy", dest: destURL, apply: true, listErr: httpErr(500), method: MethodCopy},
		{name: "501 falls back to copy", dest: destURL, listErr: httpErr(501), method: MethodCopy},
		{name: "UnsupportedOperation falls back to copy", dest: destURL, listErr: &smithy.GenericAPIError{Code: "UnsupportedOperation"}, method: MethodCopy},
		{name: "throttled probe falls back to copy", dest: destURL, apply: true, listErr: &smithy.GenericAPIError{Code: "ThrottlingException"}, method: MethodCopy},
		{name: "fallback without dest needs --to-queue", listErr: httpErr(500), method: MethodCopy, wantErr: "--to-queue"},
		{name: "access denied is an error, no fallback", dest: destURL, apply: true, listErr: &smithy.GenericAPIError{Code: "AccessDenied"}, method: MethodMoveTask, wantErr: "AccessDenied"},
		{name: "--max needs copy", dest: destURL, apply: true, max: 3, method: MethodCopy},
		{name: "COMPLETED task with messages left in flight is not done", dest: destURL, apply: true, method: MethodMoveTask, started: true, left: 2,
			statuses: []types.ListMessageMoveTasksResultEntry{status("handle-1", "COMPLETED", 5)}, moved: 5, taskStatus: "COMPLETED",
			wantErr: "2 message(s) are still in " + srcURL + " (0 visible, 2 in flight, 0 delayed) after move task handle-1 completed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.listErr, f.statuses, f.others, f.left = c.listErr, c.statuses, c.others, c.left
			var acts []string
			rep, err := Move(testctx.Bounded(t), f, MoveOptions{Source: Queue{Client: f, URL: srcURL, VisibilityTimeout: time.Second},
				Dest: c.dest, Apply: c.apply, Max: c.max, Poll: time.Millisecond, Act: func(what, _ string, _ any) { acts = append(acts, what) }})
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.method, rep.Method)
			assert.Equal(t, 7, rep.Visible)
			assert.Equal(t, !c.apply, rep.DryRun)
			assert.Equal(t, c.started, f.started != nil, "StartMessageMoveTask called")
			if f.started != nil {
				assert.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:dev-hoge-user-dlq", aws.ToString(f.started.SourceArn))
				if c.dest == "" {
					assert.Nil(t, f.started.DestinationArn, "no dest: SQS moves each message back to its source")
				} else {
					assert.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:dev-hoge-user-redrive", aws.ToString(f.started.DestinationArn))
				}
				assert.Contains(t, acts, "dlq.move-task", "the task is audited")
			}
			assert.Equal(t, c.moved, rep.Moved)
			assert.Equal(t, c.taskStatus, rep.TaskStatus)
			if !c.apply && err == nil {
				assert.Equal(t, []string{"dlq.would-move"}, acts)
				assert.Zero(t, f.received, "a dry run receives nothing")
			}
		})
	}
}

// An unreadable queue attribute is an error, never a count of 0.
func TestParseQueueInfo(t *testing.T) {
	arn := "arn:aws:sqs:eu-west-1:123456789012:q"
	cases := []struct {
		attrs   map[string]string
		visible int
		wantErr string
	}{
		{map[string]string{"QueueArn": arn, "ApproximateNumberOfMessages": "12"}, 12, ""},
		{map[string]string{"QueueArn": arn, "ApproximateNumberOfMessages": "0"}, 0, ""},
		{map[string]string{"QueueArn": arn}, 0, "no ApproximateNumberOfMessages"},
		{map[string]string{"QueueArn": arn, "ApproximateNumberOfMessages": ""}, 0, "not a count"},
		{map[string]string{"QueueArn": arn, "ApproximateNumberOfMessages": "many"}, 0, "not a count"},
		{map[string]string{"QueueArn": arn, "ApproximateNumberOfMessages": "-1"}, 0, "not a count"},
		{map[string]string{"ApproximateNumberOfMessages": "3"}, 0, "no QueueArn"},
		{nil, 0, "no ApproximateNumberOfMessages"},
	}
	for _, c := range cases {
		gotArn, visible, err := parseQueueInfo("https://q", c.attrs)
		if c.wantErr != "" {
			assert.ErrorContains(t, err, c.wantErr, "%v", c.attrs)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, arn, gotArn)
		assert.Equal(t, c.visible, visible)
	}
}

func TestReceiveCountUnreadable(t *testing.T) {
	for raw, want := range map[string]int{"3": 3, "0": 0, "": -1, "x": -1} {
		m := types.Message{Attributes: map[string]string{"ApproximateReceiveCount": raw}}
		assert.Equal(t, want, receiveCount(m), raw)
	}
}
