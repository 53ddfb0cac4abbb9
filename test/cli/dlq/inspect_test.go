package dlq

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/dlq/inspect"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/redrive"
)

// TestInspect_DDB_STREAM_05 lists every message without consuming any: an ok
// batch, a critical one (under --critical), a lost one (past 24 h) and two
// malformed messages.
func TestInspect_DDB_STREAM_05(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	for i := range 3 {
		d.put(orderID(i), i, false)
	}
	recs := d.records()
	arrivedAgo := func(ago time.Duration) func(*onfailure.Record) {
		return func(r *onfailure.Record) {
			r.Batch.ApproximateArrivalOfFirstRecord = time.Now().Add(-ago).UTC().Truncate(time.Second)
			r.Batch.ApproximateArrivalOfLastRecord = r.Batch.ApproximateArrivalOfFirstRecord
		}
	}
	d.fail(recs[0:1], nil)
	d.fail(recs[1:2], arrivedAgo(22*time.Hour))
	d.fail(recs[2:3], arrivedAgo(25*time.Hour))
	d.sendRaw("{}")
	d.sendRaw("<xml/>")

	stdout, _, code := d.dynops("dlq", "inspect", "--queue", d.dlq, "--critical", "4h", "-o", "json")
	require.Equal(t, exitcode.Lost, code, "lost and malformed messages exit 4")
	rep := jsonOut[inspect.Report](t, stdout)
	require.Len(t, rep.Messages, 5, "every message is listed, malformed ones too")
	assert.Equal(t, map[string]int{redrive.StateOK: 1, redrive.StateCritical: 1, redrive.StateLost: 1, redrive.StateMalformed: 2}, rep.Counts)
	bySeq := map[string]redrive.Entry{}
	for _, e := range rep.Messages {
		bySeq[e.Start] = e
	}
	ok := bySeq[aws.ToString(recs[0].Dynamodb.SequenceNumber)]
	assert.Equal(t, redrive.StateOK, ok.State)
	assert.Equal(t, d.table, ok.Table)
	assert.Equal(t, d.shard.ShardID, ok.Shard)
	assert.Equal(t, 1, ok.BatchSize)
	assert.Equal(t, "RetryAttemptsExhausted", ok.Condition)
	assert.Equal(t, "arn:aws:lambda:"+target.Region+":123456789012:function:"+consumerFn, ok.Function)
	assert.InDelta(t, (24 * time.Hour).Hours(), ok.TimeLeft.Hours(), 0.1)
	crit := bySeq[aws.ToString(recs[1].Dynamodb.SequenceNumber)]
	assert.Equal(t, redrive.StateCritical, crit.State)
	assert.InDelta(t, 2, crit.TimeLeft.Hours(), 0.1)
	assert.Equal(t, redrive.StateLost, bySeq[aws.ToString(recs[2].Dynamodb.SequenceNumber)].State)
	var bodies []string
	for _, e := range rep.Messages {
		if e.State == redrive.StateMalformed {
			bodies = append(bodies, e.Body)
			assert.NotEmpty(t, e.Problem)
		}
	}
	assert.ElementsMatch(t, []string{"{}", "<xml/>"}, bodies)

	visible, inFlight := d.depth(d.dlq)
	assert.Equal(t, 5, visible, "inspect consumed nothing: every message is visible again at once")
	assert.Zero(t, inFlight)

	// The table output, and --max.
	stdout, _, code = d.dynops("dlq", "inspect", "--queue", d.dlq, "--max", "2")
	require.Contains(t, []int{exitcode.OK, exitcode.Critical, exitcode.Lost}, code, "exit code of the two messages listed")
	assert.Contains(t, stdout, "2 message(s) in "+d.dlq)
	assert.Contains(t, stdout, "nothing was consumed")
}

// TestInspectExitCodes: 0 when every message is ok, 3 (critical) once one
// has less than --critical left, 4 (lost) once one is past 24 h or unreadable.
func TestInspectExitCodes(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	for i := range 3 {
		d.put(orderID(i), i, false)
	}
	recs := d.records()
	arrivedAgo := func(ago time.Duration) func(*onfailure.Record) {
		return func(r *onfailure.Record) {
			r.Batch.ApproximateArrivalOfFirstRecord = time.Now().Add(-ago).UTC().Truncate(time.Second)
			r.Batch.ApproximateArrivalOfLastRecord = r.Batch.ApproximateArrivalOfFirstRecord
		}
	}
	d.fail(recs[0:1], nil)
	_, _, code := d.dynops("dlq", "inspect", "--queue", d.dlq)
	assert.Equal(t, exitcode.OK, code, "only ok messages")
	_, _, code = d.dynops("dlq", "inspect", "--queue", d.dlq, "--critical", "24h")
	assert.Equal(t, exitcode.Critical, code, "the same message is critical under a wider --critical")
	d.fail(recs[1:2], arrivedAgo(22*time.Hour))
	_, _, code = d.dynops("dlq", "inspect", "--queue", d.dlq, "-o", "json")
	assert.Equal(t, exitcode.Critical, code, "one critical message")
	d.fail(recs[2:3], arrivedAgo(25*time.Hour))
	_, _, code = d.dynops("dlq", "inspect", "--queue", d.dlq)
	assert.Equal(t, exitcode.Lost, code, "one lost message")
	_, _, code = d.dynops("dlq", "inspect", "--queue", d.dlq, "--critical", "-1h")
	assert.Equal(t, exitcode.Usage, code, "a negative --critical is refused")
}

// TestMoveFallsBackOnEmulator: moto answers 500 to the message move task
// APIs, so dlq move says so and moves with receive/send/delete.
func TestMoveFallsBackOnEmulator(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	out, err := d.sqs.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.TrimSuffix(d.table, "-order") + "-orders")})
	require.NoError(t, err)
	dest := aws.ToString(out.QueueUrl)
	var want []string
	for i := range 13 {
		body := fmt.Sprintf(`{"order":%d}`, i)
		want = append(want, body)
		d.sendRaw(body)
	}

	stdout, stderr, code := d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest)
	require.Equal(t, 0, code)
	if target.OnEmulator() {
		assert.Contains(t, stderr, "the service has no message move tasks here")
		assert.Contains(t, stdout, "by receive-send-delete")
	}
	assert.Contains(t, stdout, "DRY RUN: with --yes dynops would move the 13 visible message(s)")
	visible, _ := d.depth(d.dlq)
	assert.Equal(t, 13, visible)

	stdout, _, code = d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest, "--yes", "-o", "json")
	require.Equal(t, 0, code)
	rep := jsonOut[redrive.MoveReport](t, stdout)
	assert.Equal(t, 13, rep.Moved)
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty")
	var got []string
	for len(got) < 13 {
		msgs, err := d.sqs.ReceiveMessage(d.ctx, &sqs.ReceiveMessageInput{QueueUrl: &dest, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		require.NoError(t, err)
		if len(msgs.Messages) == 0 {
			break
		}
		for _, m := range msgs.Messages {
			got = append(got, aws.ToString(m.Body))
		}
	}
	assert.ElementsMatch(t, want, got, "every message arrived once, body unchanged")
	if target.OnEmulator() {
		assert.Equal(t, 13, d.auditActions()["dlq.move"])
	}
}

// TestMoveWithMessageMoveTask runs only on AWS: the emulator answers 500.
func TestMoveWithMessageMoveTask(t *testing.T) {
	target.RequireAWS(t, "answers 500 to StartMessageMoveTask and ListMessageMoveTasks")
	t.Parallel()
	d := newDrill(t)
	out, err := d.sqs.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.TrimSuffix(d.table, "-order") + "-orders")})
	require.NoError(t, err)
	dest := aws.ToString(out.QueueUrl)
	for i := range 5 {
		d.sendRaw(fmt.Sprintf(`{"order":%d}`, i))
	}
	stdout, _, code := d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest, "--yes", "-o", "json")
	require.Equal(t, 0, code)
	rep := jsonOut[redrive.MoveReport](t, stdout)
	assert.Equal(t, redrive.MethodMoveTask, rep.Method)
	assert.Equal(t, "COMPLETED", rep.TaskStatus)
	assert.Equal(t, 5, rep.Moved)
}
