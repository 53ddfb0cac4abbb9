package dlq

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/redrive"
)

// hide receives n messages of the DLQ and keeps them hidden for vt seconds,
// as a receive whose answer was lost on the way does (or another consumer):
// they are in flight, not visible, and come back when vt ends.
func (d *drill) hide(n int, vt int32) []string {
	d.t.Helper()
	var handles []string
	for len(handles) < n {
		out, err := d.sqs.ReceiveMessage(d.ctx, &sqs.ReceiveMessageInput{QueueUrl: &d.dlq, MaxNumberOfMessages: int32(min(10, n-len(handles))), VisibilityTimeout: vt})
		require.NoError(d.t, err)
		require.NotEmpty(d.t, out.Messages, "messages to hide")
		for _, m := range out.Messages {
			handles = append(handles, aws.ToString(m.ReceiptHandle))
		}
	}
	_, inFlight := d.depth(d.dlq)
	require.Equal(d.t, n, inFlight)
	return handles
}

// release makes hidden messages visible again (their holder gave up).
func (d *drill) release(handles []string) {
	d.t.Helper()
	for _, h := range handles {
		_, err := d.sqs.ChangeMessageVisibility(d.ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &d.dlq, ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
		require.NoError(d.t, err)
	}
}

func (d *drill) bodies(queue string) []string {
	d.t.Helper()
	var got []string
	for {
		out, err := d.sqs.ReceiveMessage(d.ctx, &sqs.ReceiveMessageInput{QueueUrl: &queue, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		require.NoError(d.t, err)
		if len(out.Messages) == 0 {
			return got
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
		}
	}
}

// TestMoveWaitsForMessagesInFlight: messages in flight when the receives run
// dry (a receive whose answer was lost, another consumer) are not done.
// dlq move waits for them to come back and moves them; held longer than
// --wait-timeout, it exits 1 saying how many remain, and a re-run moves them.
func TestMoveWaitsForMessagesInFlight(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	out, err := d.sqs.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.TrimSuffix(d.table, "-order") + "-orders")})
	require.NoError(t, err)
	dest := aws.ToString(out.QueueUrl)
	var want []string
	for i := range 12 {
		body := fmt.Sprintf(`{"order":%d}`, i)
		want = append(want, body)
		d.sendRaw(body)
	}

	// 5 in flight for 3 s: the run waits and moves all 12.
	d.hide(5, 3)
	stdout, stderr, code := d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest, "--yes", "-o", "json")
	require.Equal(t, 0, code, stderr)
	rep := jsonOut[redrive.MoveReport](t, stdout)
	assert.Equal(t, 12, rep.Moved)
	assert.Zero(t, rep.Remaining)
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty")
	assert.ElementsMatch(t, want, d.bodies(dest))

	// 4 of 10 held for 5 min, --wait-timeout 2s: exit 1, 4 remain; a re-run
	// once they are back moves them.
	want = want[:0]
	for i := range 10 {
		body := fmt.Sprintf(`{"order":%d}`, 100+i)
		want = append(want, body)
		d.sendRaw(body)
	}
	handles := d.hide(4, 300)
	_, stderr, code = d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest, "--yes", "--wait-timeout", "2s")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "4 message(s) are still in "+d.dlq+" (0 visible, 4 in flight, 0 delayed)")
	assert.Contains(t, stderr, "a re-run converges")
	assert.Contains(t, stderr, "moved 6 message(s)")
	d.release(handles)
	stdout, stderr, code = d.dynops("dlq", "move", "--queue", d.dlq, "--to-queue", dest, "--yes", "-o", "json")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 4, jsonOut[redrive.MoveReport](t, stdout).Moved)
	visible, inFlight = d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty after the re-run")
	assert.ElementsMatch(t, want, d.bodies(dest))
}

// TestRedriveWaitsForMessagesInFlight: the same for dlq redrive, with real
// on-failure records replayed to the consumer.
func TestRedriveWaitsForMessagesInFlight(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	for i := range 8 {
		d.put(orderID(i), i, false)
	}
	recs := d.records()
	require.Len(t, recs, 8)
	for i := range recs {
		d.fail(recs[i:i+1], nil)
	}

	d.hide(3, 3)
	stdout, stderr, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	require.Equal(t, 0, code, stderr)
	rep := jsonOut[report](t, stdout)
	assert.Len(t, rep.Outcomes, 8, "the 3 in flight came back and were replayed")
	assert.Equal(t, 8, rep.Counts[redrive.Replayed])
	assert.Len(t, d.processedIDs(), 8)
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty")

	// Held past --wait-timeout: exit 1, how many remain; the re-run converges.
	for i := 8; i < 14; i++ {
		d.put(orderID(i), i, false)
	}
	recs = d.records()[8:]
	for i := range recs {
		d.fail(recs[i:i+1], nil)
	}
	handles := d.hide(2, 300)
	_, stderr, code = d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "--wait-timeout", "2s")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "2 message(s) are still in "+d.dlq+" (0 visible, 2 in flight, 0 delayed)")
	assert.Contains(t, stderr, "a re-run converges")
	d.release(handles)
	stdout, stderr, code = d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	require.Equal(t, 0, code, stderr)
	assert.Len(t, jsonOut[report](t, stdout).Outcomes, 2)
	assert.Len(t, d.processedIDs(), 14, "every record processed")
	visible, inFlight = d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty after the re-run")
}
