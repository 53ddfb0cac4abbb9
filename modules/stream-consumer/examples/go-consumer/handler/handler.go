// Package handler is the example stream consumer: an idempotent DynamoDB
// Streams handler (DDB-STREAM-04) that records each processed event ID with a
// conditional write, and that refuses "poison" records on purpose so the
// on-failure DLQ and `dynops dlq redrive` can be drilled.
package handler

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PoisonAttribute marks a record the handler refuses while AcceptPoison is false.
const PoisonAttribute = "poison"

// Putter is the one DynamoDB call the handler makes.
type Putter interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Handler processes stream batches.
type Handler struct {
	DB Putter
	// ProcessedTable records processed event IDs (hash key event_id, S).
	ProcessedTable string
	// AcceptPoison is the "fix": when true, poison records are processed too.
	AcceptPoison bool
}

// Handle processes a batch and reports the records it could not process, so
// that with ReportBatchItemFailures Lambda retries (and bisects) from the
// first failure only. Records already processed are skipped: replays are safe.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	for _, r := range ev.Records {
		if err := h.process(ctx, r); err != nil {
			// Everything from the first failure on is retried, in order.
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			return resp, nil
		}
	}
	return resp, nil
}

// ErrPoison is returned for a poison record while AcceptPoison is false.
var ErrPoison = errors.New("poison record refused")

func (h *Handler) process(ctx context.Context, r events.DynamoDBEventRecord) error {
	if img := r.Change.NewImage; img != nil && !h.AcceptPoison {
		if v, ok := img[PoisonAttribute]; ok && v.DataType() == events.DataTypeBoolean && v.Boolean() {
			return fmt.Errorf("%w: event %s", ErrPoison, r.EventID)
		}
	}
	_, err := h.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(h.ProcessedTable),
		Item: map[string]types.AttributeValue{
			"event_id":        &types.AttributeValueMemberS{Value: r.EventID},
			"event_name":      &types.AttributeValueMemberS{Value: r.EventName},
			"sequence_number": &types.AttributeValueMemberS{Value: r.Change.SequenceNumber},
			"approx_created":  &types.AttributeValueMemberN{Value: strconv.FormatInt(r.Change.ApproximateCreationDateTime.Unix(), 10)},
		},
		ConditionExpression:      aws.String("attribute_not_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": "event_id"},
	})
	var done *types.ConditionalCheckFailedException
	if errors.As(err, &done) {
		return nil // processed before: a replay, nothing to do
	}
	if err != nil {
		return fmt.Errorf("recording event %s: %w", r.EventID, err)
	}
	return nil
}
