package redrive

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The record as the Lambda developer guide shows it ("Retain discarded
// records for a DynamoDB event source in Lambda"): every field reaches the
// listing.
const docRecord = `{"requestContext": {"requestId": "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81",
 "functionArn": "arn:aws:lambda:us-east-2:123456789012:function:myfunction", "condition": "RetryAttemptsExhausted", "approximateInvokeCount": 1},
 "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
 "version": "1.0", "timestamp": "2019-11-14T00:13:49.717Z",
 "DDBStreamBatchInfo": {"shardId": "shardId-00000001573689847184-864758bb", "startSequenceNumber": "800000000003126276362",
  "endSequenceNumber": "800000000003126276362", "approximateArrivalOfFirstRecord": "2019-11-14T00:13:19Z",
  "approximateArrivalOfLastRecord": "2019-11-14T00:13:20Z", "batchSize": 1,
  "streamArn": "arn:aws:dynamodb:us-east-2:123456789012:table/mytable/stream/2019-11-14T00:04:06.388"}}`

func TestEntryShowsEveryRecordField(t *testing.T) {
	now := time.Date(2019, 11, 14, 1, 0, 0, 0, time.UTC)
	m := types.Message{MessageId: aws.String("m1"), Body: aws.String(docRecord), Attributes: map[string]string{"ApproximateReceiveCount": "2"}}
	e := entryOf(m, now, 4*time.Hour)
	require.Equal(t, StateOK, e.State, e.Problem)
	assert.Equal(t, "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81", e.RequestID)
	assert.Equal(t, 1, e.InvokeCount)
	assert.Equal(t, 200, e.StatusCode)
	assert.Equal(t, "$LATEST", e.ExecutedVersion)
	assert.Equal(t, "1.0", e.Version)
	assert.Equal(t, "Unhandled", e.FunctionError)
	require.NotNil(t, e.LastArrival)
	assert.Equal(t, time.Date(2019, 11, 14, 0, 13, 20, 0, time.UTC), e.LastArrival.UTC())
	assert.Equal(t, 2, e.ReceiveCount)
	assert.Empty(t, e.Body, "a valid record's body only with --show-body")

	entries := []Entry{e, entryOf(types.Message{MessageId: aws.String("m2"), Body: aws.String("not json")}, now, time.Hour)}
	ShowBody(entries)
	assert.Equal(t, docRecord, entries[0].Body)
	assert.Equal(t, "not json", entries[1].Body)
	assert.Equal(t, StateMalformed, entries[1].State)
	assert.Equal(t, -1, entries[1].ReceiveCount, "no attribute: -1, not 0")
}
