package onfailure

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// docsExample is the on-failure record of the Lambda developer guide.
const docsExample = `{
    "requestContext": {
        "requestId": "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81",
        "functionArn": "arn:aws:lambda:us-east-2:123456789012:function:myfunction",
        "condition": "RetryAttemptsExhausted",
        "approximateInvokeCount": 1
    },
    "responseContext": {
        "statusCode": 200,
        "executedVersion": "$LATEST",
        "functionError": "Unhandled"
    },
    "version": "1.0",
    "timestamp": "2019-11-14T00:13:49.717Z",
    "DDBStreamBatchInfo": {
        "shardId": "shardId-00000001573689847184-864758bb",
        "startSequenceNumber": "800000000003126276362",
        "endSequenceNumber": "800000000003126276362",
        "approximateArrivalOfFirstRecord": "2019-11-14T00:13:19Z",
        "approximateArrivalOfLastRecord": "2019-11-14T00:13:19Z",
        "batchSize": 1,
        "streamArn": "arn:aws:dynamodb:us-east-2:123456789012:table/mytable/stream/2019-11-14T00:04:06.388"
    }
}`

func TestDecodeDocsExample(t *testing.T) {
	r, err := Decode(docsExample)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Batch
	if b.Table() != "mytable" || b.Region() != "us-east-2" || b.ShardID != "shardId-00000001573689847184-864758bb" ||
		b.StartSequenceNumber != "800000000003126276362" || b.BatchSize != 1 {
		t.Errorf("batch info decoded wrong: %+v", b)
	}
	if r.RequestContext.Condition != "RetryAttemptsExhausted" || r.RequestContext.FunctionArn != "arn:aws:lambda:us-east-2:123456789012:function:myfunction" ||
		r.ResponseContext.FunctionError != "Unhandled" || r.Version != "1.0" {
		t.Errorf("contexts decoded wrong: %+v", r)
	}
	if want := time.Date(2019, 11, 15, 0, 13, 19, 0, time.UTC); !b.ExpiresAt().Equal(want) {
		t.Errorf("ExpiresAt = %s, want %s (arrival of the first record + 24 h)", b.ExpiresAt(), want)
	}
	if left := b.TimeLeft(time.Date(2019, 11, 14, 20, 13, 19, 0, time.UTC)); left != 4*time.Hour {
		t.Errorf("TimeLeft = %s, want 4h", left)
	}
	// Encode gives back what Decode reads.
	s, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Decode(s)
	if err != nil || *again.Batch != *r.Batch || again.RequestContext != r.RequestContext {
		t.Errorf("Encode/Decode round trip changed the record: %v\n%s", err, s)
	}
}

func TestDecodeMalformed(t *testing.T) {
	kinesis := strings.Replace(docsExample, "DDBStreamBatchInfo", "KinesisBatchInfo", 1)
	for name, tc := range map[string]struct{ body, want string }{
		"not json":          {"hello", "not JSON"},
		"empty object":      {"{}", "no DDBStreamBatchInfo"},
		"kinesis record":    {kinesis, "KinesisBatchInfo (another event source)"},
		"no shard":          {strings.Replace(docsExample, `"shardId": "shardId-00000001573689847184-864758bb",`, "", 1), "lacks shardId"},
		"bad sequence":      {strings.Replace(docsExample, `"startSequenceNumber": "800000000003126276362"`, `"startSequenceNumber": "80x"`, 1), "not decimal"},
		"start after end":   {strings.Replace(docsExample, `"startSequenceNumber": "800000000003126276362"`, `"startSequenceNumber": "900000000003126276362"`, 1), "after endSequenceNumber"},
		"not a stream arn":  {strings.Replace(docsExample, "table/mytable/stream/2019-11-14T00:04:06.388", "table/mytable", 1), "not a DynamoDB stream ARN"},
		"wrong field types": {`{"DDBStreamBatchInfo": {"batchSize": "one"}}`, "not JSON of the documented shape"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(tc.body)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode error = %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

func TestCompareSequence(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1}, {"10", "9", 1}, {"800000000003126276362", "800000000003126276362", 0},
		{"800000000003126276362", "800000000003126276363", -1}, {"1100000000017454423010", "999999999999999999999", 1},
	} {
		if got := CompareSequence(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareSequence(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
