package dlq

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/redrive"
)

type report = redrive.Report

func TestRedriveDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 10, false)
	d.put("o-2", 20, false)
	recs := d.records()
	d.fail(recs[:1], nil)
	d.fail(recs[1:], nil)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "-o", "json")
	require.Equal(t, 0, code)
	rep := jsonOut[report](t, stdout)
	assert.True(t, rep.DryRun)
	assert.Equal(t, 2, rep.Counts[redrive.WouldReplay])
	for _, o := range rep.Outcomes {
		require.Len(t, o.Records, 1, "the dry run read the batch from the stream")
		assert.Contains(t, []string{`order_id="o-1"`, `order_id="o-2"`}, o.Records[0].Keys)
		assert.Equal(t, consumerFn, lastPart(o.Target), "the record's own function")
	}
	assert.Empty(t, d.endpoint.Invocations(), "a dry run invokes nothing")
	visible, inFlight := d.depth(d.dlq)
	assert.Equal(t, 2, visible, "a dry run deletes nothing and leaves every message visible")
	assert.Zero(t, inFlight)
	assert.Equal(t, 2, d.auditActions()["dlq.would-replay"])
}

// TestRedriveReplaysExactEvent_DDB_STREAM_04: a batch of INSERT, MODIFY and
// REMOVE is replayed as the event an event source mapping delivers, then deleted.
func TestRedriveReplaysExactEvent_DDB_STREAM_04(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 10, false)
	d.put("o-1", 11, false)
	d.remove("o-1")
	recs := d.records()
	require.Len(t, recs, 3)
	d.fail(recs, nil)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	require.Equal(t, 0, code, stdout)
	rep := jsonOut[report](t, stdout)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, redrive.Replayed, rep.Outcomes[0].Status)

	evs := d.invokedEvents(consumerFn)
	require.Len(t, evs, 1, "one synchronous invocation")
	got := evs[0]["Records"].([]any)
	require.Len(t, got, 3)
	for i, r := range recs {
		g := got[i].(map[string]any)
		assert.ElementsMatch(t, []string{"eventID", "eventName", "eventVersion", "eventSource", "awsRegion", "dynamodb", "eventSourceARN"}, keys(g))
		assert.Equal(t, aws.ToString(r.EventID), g["eventID"])
		assert.Equal(t, string(r.EventName), g["eventName"])
		assert.Equal(t, aws.ToString(r.EventVersion), g["eventVersion"])
		assert.Equal(t, "aws:dynamodb", g["eventSource"])
		assert.Equal(t, aws.ToString(r.AwsRegion), g["awsRegion"])
		assert.Equal(t, d.shard.StreamArn, g["eventSourceARN"])
		dd := g["dynamodb"].(map[string]any)
		assert.Equal(t, aws.ToString(r.Dynamodb.SequenceNumber), dd["SequenceNumber"])
		assert.Equal(t, "NEW_AND_OLD_IMAGES", dd["StreamViewType"])
		assert.EqualValues(t, aws.ToInt64(r.Dynamodb.SizeBytes), dd["SizeBytes"])
		assert.InDelta(t, float64(r.Dynamodb.ApproximateCreationDateTime.UnixNano())/1e9, dd["ApproximateCreationDateTime"], 0.001, "epoch seconds, a number")
		assert.Equal(t, map[string]any{"order_id": map[string]any{"S": "o-1"}}, dd["Keys"])
	}
	first, second, third := got[0].(map[string]any)["dynamodb"].(map[string]any), got[1].(map[string]any)["dynamodb"].(map[string]any), got[2].(map[string]any)["dynamodb"].(map[string]any)
	assert.Equal(t, []string{"INSERT", "MODIFY", "REMOVE"}, []string{got[0].(map[string]any)["eventName"].(string), got[1].(map[string]any)["eventName"].(string), got[2].(map[string]any)["eventName"].(string)})
	assert.Equal(t, map[string]any{"order_id": map[string]any{"S": "o-1"}, "total": map[string]any{"N": "10"}, "poison": map[string]any{"BOOL": false}}, first["NewImage"])
	assert.NotContains(t, first, "OldImage", "an INSERT has no old image")
	assert.Equal(t, map[string]any{"N": "10"}, second["OldImage"].(map[string]any)["total"])
	assert.Equal(t, map[string]any{"N": "11"}, second["NewImage"].(map[string]any)["total"])
	assert.NotContains(t, third, "NewImage", "a REMOVE has no new image")

	assert.Equal(t, map[string]bool{ids(recs)[0]: true, ids(recs)[1]: true, ids(recs)[2]: true}, d.processedIDs(), "the consumer processed every record")
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the message was deleted after the successful invocation")
	acts := d.auditActions()
	assert.Equal(t, 1, acts["dlq.replay"])
	assert.Equal(t, 1, acts["dlq.delete"])
}

// TestRedrivePoisonRecord: the consumer refuses the poison record (partial
// batch failure): the message is kept; once the fix is deployed, it goes.
func TestRedrivePoisonRecord(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-ok", 1, false)
	d.put("o-poison", 2, true)
	recs := d.records()
	d.fail(recs, nil)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	assert.Equal(t, 1, code, "exit 1: a message was kept")
	rep := jsonOut[report](t, stdout)
	require.Len(t, rep.Outcomes, 1)
	o := rep.Outcomes[0]
	assert.Equal(t, redrive.Failed, o.Status)
	assert.Contains(t, o.Reason, "1 batch item failure(s), the first at sequence number "+aws.ToString(recs[1].Dynamodb.SequenceNumber))
	visible, inFlight := d.depth(d.dlq)
	assert.Equal(t, 1, visible, "kept and visible again at the end of the run")
	assert.Zero(t, inFlight)
	assert.Equal(t, map[string]bool{ids(recs)[0]: true}, d.processedIDs(), "the good record was processed, the poison one not")
	assert.Equal(t, 1, d.auditActions()["dlq.keep"])

	d.consumer.AcceptPoison = true // the fix is deployed
	stdout, _, code = d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	require.Equal(t, 0, code)
	assert.Equal(t, redrive.Replayed, jsonOut[report](t, stdout).Outcomes[0].Status)
	assert.Equal(t, map[string]bool{ids(recs)[0]: true, ids(recs)[1]: true}, d.processedIDs())
	assert.Len(t, d.invokedEvents(consumerFn), 2, "one replay per run; the replayed good record was skipped by the idempotent consumer")
	visible, inFlight = d.depth(d.dlq)
	assert.Zero(t, visible+inFlight)
}

func TestRedriveFunctionErrorKeepsMessage(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 1, false)
	d.fail(d.records(), nil)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--function", crashingFn, "--yes", "-o", "json")
	assert.Equal(t, 1, code)
	o := jsonOut[report](t, stdout).Outcomes[0]
	assert.Equal(t, redrive.Failed, o.Status)
	assert.Contains(t, o.Reason, "function error (Unhandled)")
	assert.Contains(t, o.Reason, "consumer crashed")
	assert.Len(t, d.invokedEvents(crashingFn), 1)
	visible, _ := d.depth(d.dlq)
	assert.Equal(t, 1, visible)

	// An unknown function (404 ResourceNotFoundException): its tags cannot be
	// read, so it is protected and refused before anything is taken.
	_, stderr, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--function", "no-such-function", "--yes", "-o", "json")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "function no-such-function is protected")
	assert.Contains(t, stderr, "ResourceNotFoundException")
	visible, _ = d.depth(d.dlq)
	assert.Equal(t, 1, visible)
}

// TestRedriveExpired_DDB_STREAM_05: records past the 24 h retention are
// reported with their keys unknown and kept, unless --discard-expired.
func TestRedriveExpired_DDB_STREAM_05(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 1, false)
	d.fail(d.records(), func(r *onfailure.Record) {
		r.Batch.ApproximateArrivalOfFirstRecord = time.Now().Add(-25 * time.Hour).UTC().Truncate(time.Second)
		r.Batch.ApproximateArrivalOfLastRecord = r.Batch.ApproximateArrivalOfFirstRecord
	})

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	assert.Equal(t, 1, code)
	o := jsonOut[report](t, stdout).Outcomes[0]
	assert.Equal(t, redrive.Expired, o.Status)
	assert.Contains(t, o.Reason, "keys unknown")
	assert.Empty(t, o.Records)
	assert.Empty(t, d.endpoint.Invocations())
	visible, _ := d.depth(d.dlq)
	assert.Equal(t, 1, visible, "kept without --discard-expired")

	stdout, _, code = d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "--discard-expired", "-o", "json")
	require.Equal(t, 0, code)
	assert.Equal(t, redrive.Discarded, jsonOut[report](t, stdout).Outcomes[0].Status)
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight)
	assert.Equal(t, 1, d.auditActions()["dlq.discard-expired"])
}

func TestRedriveMalformedKept(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 1, false)
	d.fail(d.records(), nil)
	d.sendRaw("not json at all")
	d.sendRaw(`{"version":"1.0","KinesisBatchInfo":{"shardId":"shardId-000000000001"}}`)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--yes", "-o", "json")
	assert.Equal(t, 1, code)
	rep := jsonOut[report](t, stdout)
	assert.Equal(t, 1, rep.Counts[redrive.Replayed])
	assert.Equal(t, 2, rep.Counts[redrive.KeptMalformed])
	var reasons []string
	for _, o := range rep.Outcomes {
		if o.Status == redrive.KeptMalformed {
			reasons = append(reasons, o.Reason)
		}
	}
	sort.Strings(reasons)
	assert.Contains(t, reasons[0], "body is not JSON")
	assert.Contains(t, reasons[1], "KinesisBatchInfo")
	visible, inFlight := d.depth(d.dlq)
	assert.Equal(t, 2, visible, "malformed messages stay, visible")
	assert.Zero(t, inFlight)
}

func TestRedriveToQueue(t *testing.T) {
	t.Parallel()
	d := newDrill(t)
	d.put("o-1", 1, false)
	recs := d.records()
	d.fail(recs, nil)
	out, err := d.sqs.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.TrimSuffix(d.table, "-order") + "-consumer")})
	require.NoError(t, err)
	dest := aws.ToString(out.QueueUrl)

	stdout, _, code := d.dynops("dlq", "redrive", "--queue", d.dlq, "--to-queue", dest, "--yes", "-o", "json")
	require.Equal(t, 0, code)
	assert.Equal(t, dest, jsonOut[report](t, stdout).Outcomes[0].Target)
	msgs, err := d.sqs.ReceiveMessage(d.ctx, &sqs.ReceiveMessageInput{QueueUrl: &dest, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Len(t, msgs.Messages, 1)
	var ev struct {
		Records []struct {
			EventID        string `json:"eventID"`
			EventSourceARN string `json:"eventSourceARN"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(msgs.Messages[0].Body)), &ev))
	require.Len(t, ev.Records, 1)
	assert.Equal(t, aws.ToString(recs[0].EventID), ev.Records[0].EventID)
	assert.Equal(t, d.shard.StreamArn, ev.Records[0].EventSourceARN)
	assert.Empty(t, d.endpoint.Invocations())
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, visible+inFlight)
}

func TestRedriveBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no queue", []string{"dlq", "redrive"}, "--queue URL"},
		{"function and to-queue", []string{"dlq", "redrive", "-q", "http://q/a", "--function", "f", "--to-queue", "http://q/b"}, "not both"},
		{"concurrency", []string{"dlq", "redrive", "-q", "http://q/a", "--concurrency", "0"}, "--concurrency 0"},
		{"lambda endpoint", []string{"dlq", "redrive", "-q", "http://q/a", "--lambda-endpoint-url", "nope"}, "--lambda-endpoint-url \"nope\" is not a URL"},
		{"inspect without queue", []string{"dlq", "inspect"}, "--queue URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := target.Dynops(t, t.TempDir()+"/audit.jsonl", tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func lastPart(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }
