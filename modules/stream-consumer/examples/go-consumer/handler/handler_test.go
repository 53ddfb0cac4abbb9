package handler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memTable is an in-memory PutItem with the attribute_not_exists condition,
// enough to test the handler's decisions without AWS.
type memTable struct {
	items map[string]map[string]types.AttributeValue
	fail  error
}

func (m *memTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	id := in.Item["event_id"].(*types.AttributeValueMemberS).Value
	if _, ok := m.items[id]; ok {
		return nil, &types.ConditionalCheckFailedException{Message: new(string)}
	}
	m.items[id] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func record(id, seq string, poison bool) events.DynamoDBEventRecord {
	img := map[string]events.DynamoDBAttributeValue{"user_id": events.NewStringAttribute("u-" + id)}
	if poison {
		img[PoisonAttribute] = events.NewBooleanAttribute(true)
	}
	return events.DynamoDBEventRecord{EventID: id, EventName: "INSERT", Change: events.DynamoDBStreamRecord{
		SequenceNumber: seq, NewImage: img, ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Unix(1700000000, 0)},
	}}
}

func TestHandleRecordsEveryEvent(t *testing.T) {
	db := &memTable{items: map[string]map[string]types.AttributeValue{}}
	h := &Handler{DB: db, ProcessedTable: "dev-hoge-stream-processed"}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("e1", "100", false), record("e2", "200", false)}})
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	require.Len(t, db.items, 2)
	assert.Equal(t, "200", db.items["e2"]["sequence_number"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, "1700000000", db.items["e1"]["approx_created"].(*types.AttributeValueMemberN).Value)
}

func TestHandleIsIdempotent_DDB_STREAM_04(t *testing.T) {
	db := &memTable{items: map[string]map[string]types.AttributeValue{}}
	h := &Handler{DB: db, ProcessedTable: "t"}
	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("e1", "100", false)}}
	for i := 0; i < 3; i++ { // a replay (retry, bisect, redrive) is a no-op
		resp, err := h.Handle(context.Background(), batch)
		require.NoError(t, err)
		assert.Empty(t, resp.BatchItemFailures)
	}
	assert.Len(t, db.items, 1)
}

func TestHandleReportsFirstPoisonRecord(t *testing.T) {
	db := &memTable{items: map[string]map[string]types.AttributeValue{}}
	h := &Handler{DB: db, ProcessedTable: "t"}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("e1", "100", false), record("e2", "200", true), record("e3", "300", false),
	}})
	require.NoError(t, err, "a poison record is a batch item failure, not a function error")
	assert.Equal(t, []events.DynamoDBBatchItemFailure{{ItemIdentifier: "200"}}, resp.BatchItemFailures, "retry from the poison record on, in order")
	assert.Contains(t, db.items, "e1")
	assert.NotContains(t, db.items, "e3", "records after the failure wait for the retry")

	h.AcceptPoison = true // the drill's fix
	resp, err = h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("e2", "200", true), record("e3", "300", false)}})
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Len(t, db.items, 3)
}

func TestHandleReportsWriteFailures(t *testing.T) {
	db := &memTable{items: map[string]map[string]types.AttributeValue{}, fail: errors.New("throttled")}
	h := &Handler{DB: db, ProcessedTable: "t"}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("e1", "100", false)}})
	require.NoError(t, err)
	assert.Equal(t, []events.DynamoDBBatchItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures)
}

func TestPoisonNeedsBooleanTrue(t *testing.T) {
	db := &memTable{items: map[string]map[string]types.AttributeValue{}}
	h := &Handler{DB: db, ProcessedTable: "t"}
	r := record("e1", "100", false)
	r.Change.NewImage[PoisonAttribute] = events.NewStringAttribute("true") // not a BOOL
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{r}})
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
}
