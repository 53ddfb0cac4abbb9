package redrive

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/testctx"
)

// answerInvoker answers every invocation with out (or err) and records the
// function and region it was asked for.
type answerInvoker struct {
	out      *lambda.InvokeOutput
	err      error
	function string
	region   string
	payload  string
	calls    int
}

func (a *answerInvoker) Invoke(_ context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	a.calls++
	a.function, a.payload = aws.ToString(in.FunctionName), string(in.Payload)
	o := lambda.Options{Region: "home"}
	for _, f := range opts {
		f(&o)
	}
	a.region = o.Region
	if in.InvocationType != "RequestResponse" {
		return nil, errors.New("not a synchronous invocation: " + string(in.InvocationType))
	}
	return a.out, a.err
}

// What a function's answer means for the message: delivered only without an
// invocation error, a function error, a non-2xx status or any batch item
// failure.
func TestFunctionDeliver(t *testing.T) {
	rec := onfailure.Record{RequestContext: onfailure.RequestContext{FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:consumer"}}
	cases := []struct {
		name     string
		override string
		rec      onfailure.Record
		allow    error
		out      *lambda.InvokeOutput
		err      error
		wantErr  string
		function string
		region   string
		calls    int
	}{
		{name: "delivered to the record's function, in its region", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"batchItemFailures":[]}`)},
			function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "an answer that is not a batch response", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`null`)},
			function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "--function by name: the client's region", override: "other", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200},
			function: "other", region: "home", calls: 1},
		{name: "--function by ARN: its region", override: "arn:aws:lambda:us-east-2:123456789012:function:f", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200},
			function: "arn:aws:lambda:us-east-2:123456789012:function:f", region: "us-east-2", calls: 1},
		{name: "no function anywhere", rec: onfailure.Record{}, wantErr: "the on-failure record names no function: pass --function NAME|ARN"},
		{name: "not allowed: not invoked", rec: rec, allow: errors.New("protected: pass --confirm"), wantErr: "protected: pass --confirm", function: rec.RequestContext.FunctionArn},
		{name: "the invocation fails", rec: rec, err: errors.New("TooManyRequestsException"), wantErr: "invoking arn:aws:lambda:eu-west-1:123456789012:function:consumer: TooManyRequestsException",
			function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "a function error", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorType":"KeyError","errorMessage":"sk"}`)},
			wantErr: "returned a function error (Unhandled): KeyError: sk", function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "a status that is not 2xx", rec: rec, out: &lambda.InvokeOutput{StatusCode: 302},
			wantErr: "answered status 302", function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "status 199", rec: rec, out: &lambda.InvokeOutput{StatusCode: 199},
			wantErr: "answered status 199", function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "status 202", rec: rec, out: &lambda.InvokeOutput{StatusCode: 202},
			function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "batch item failures", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"batchItemFailures":[{"itemIdentifier":"105"},{"itemIdentifier":"107"}]}`)},
			wantErr: "reported 2 batch item failure(s), the first at sequence number 105", function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
		{name: "a batch item failure without identifier: the whole batch", rec: rec, out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"batchItemFailures":[{}]}`)},
			wantErr: "reported 1 batch item failure(s), the first at sequence number (empty itemIdentifier: the whole batch)", function: rec.RequestContext.FunctionArn, region: "eu-west-1", calls: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := &answerInvoker{out: c.out, err: c.err}
			f := Function{Client: inv, Name: c.override}
			if c.allow != nil {
				f.Allow = func(context.Context, string) error { return c.allow }
			}
			got, err := f.Deliver(testctx.Bounded(t), c.rec, []byte(`{"Records":[]}`))
			if c.wantErr != "" {
				assert.ErrorContains(t, err, c.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, `{"Records":[]}`, inv.payload)
			}
			assert.Equal(t, c.function, got, "where it went")
			assert.Equal(t, c.calls, inv.calls)
			if c.calls > 0 {
				assert.Equal(t, c.function, inv.function)
				assert.Equal(t, c.region, inv.region)
			}
		})
	}
}

func TestARNRegion(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:lambda:eu-west-1:123456789012:function:f":      "eu-west-1",
		"arn:aws:lambda:eu-west-1:123456789012:function:f:live": "eu-west-1",
		"arn:aws:lambda:eu-west-1:123456789012:function":        "",
		"arn:aws:sqs:eu-west-1:123456789012:function:f":         "",
		"xrn:aws:lambda:eu-west-1:123456789012:function:f":      "",
		"consumer":                "",
		"123456789012:function:f": "",
		"arn:aws-cn:lambda:cn-north-1:123456789012:function:f":    "cn-north-1",
		"arn:aws:lambda:us-gov-west-1:123456789012:function:f:$1": "us-gov-west-1",
	} {
		assert.Equal(t, want, ARNRegion(in), in)
	}
}

func TestQueueTargetDeliver(t *testing.T) {
	q := newMemQueue(0)
	got, err := QueueTarget{Client: q, URL: "dst"}.Deliver(testctx.Bounded(t), onfailure.Record{}, []byte(`{"Records":[1]}`))
	require.NoError(t, err)
	assert.Equal(t, "dst", got)
	assert.Equal(t, []string{`{"Records":[1]}`}, q.sent)

	q.failSend[`{"Records":[2]}`] = true
	got, err = QueueTarget{Client: q, URL: "dst"}.Deliver(testctx.Bounded(t), onfailure.Record{}, []byte(`{"Records":[2]}`))
	assert.ErrorContains(t, err, "sending the event to dst: injected: send failed")
	assert.Equal(t, "dst", got)
	assert.Len(t, q.sent, 1)
}

// Inspect lists without consuming: up to max, each message once, and every
// one visible again afterwards.
func TestInspectPeeks(t *testing.T) {
	for _, c := range []struct{ n, max, want int }{{0, 0, 0}, {3, 0, 3}, {25, 0, 25}, {25, 12, 12}, {25, 10, 10}, {25, 11, 11}, {5, 12, 5}} {
		q := dlqOf(t, c.n, time.Hour, map[int]string{0: "not json"})
		entries, err := Inspect(testctx.Bounded(t), Queue{Client: q, URL: "dlq", VisibilityTimeout: 10 * time.Second}, c.max, time.Now(), 4*time.Hour)
		require.NoError(t, err)
		require.Len(t, entries, c.want, "%d messages, max %d", c.n, c.max)
		seen := map[string]bool{}
		for _, e := range entries {
			assert.False(t, seen[e.MessageID], "listed once: %s", e.MessageID)
			seen[e.MessageID] = true
		}
		if c.want > 0 {
			assert.Equal(t, StateMalformed, entries[0].State)
		}
		if c.want > 1 {
			assert.Equal(t, StateOK, entries[1].State, "23 h left")
		}
		assert.Equal(t, c.n, q.left(), "nothing deleted")
		q.mu.Lock()
		for _, m := range q.msgs {
			assert.False(t, time.Now().Before(m.visibleAt), "%s made visible again", m.id)
		}
		q.mu.Unlock()
	}
}

// An entry's state by the time its batch has left.
func TestEntryStates(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		age  time.Duration
		want string
	}{
		{time.Hour, StateOK},
		{onfailure.Retention - 4*time.Hour, StateOK}, // exactly 4 h left: not critical
		{onfailure.Retention - 4*time.Hour + time.Second, StateCritical},
		{onfailure.Retention - time.Second, StateCritical},
		{onfailure.Retention, StateLost}, // no time left
		{onfailure.Retention + time.Hour, StateLost},
	} {
		q := dlqOf(t, 1, 0, nil)
		b := batch(100, 102)
		b.ApproximateArrivalOfFirstRecord = now.Add(-c.age)
		body, err := onfailure.Encode(onfailure.Record{Batch: &b})
		require.NoError(t, err)
		q.msgs[0].body = body
		m := q.hide(q.msgs[0], 0)
		assert.Equal(t, c.want, entryOf(m, now, 4*time.Hour).State, "arrived %s ago", c.age)
	}
}
