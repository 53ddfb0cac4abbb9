// Package redrive recovers the batches a DynamoDB stream consumer gave up on:
// it reads the on-failure records in the DLQ (internal/onfailure), re-reads
// their stream records from the shard, rebuilds the event the consumer
// receives, delivers it (the function, or another queue) and deletes a
// message only once its delivery succeeded. It also moves plain SQS DLQs.
package redrive

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/dynops/dynops/internal/onfailure"
)

// Message states reported by Inspect.
const (
	StateOK        = "ok"        // readable for longer than the critical threshold
	StateCritical  = "critical"  // readable, but for less than the threshold
	StateLost      = "lost"      // past the 24 h retention: the records are gone
	StateMalformed = "malformed" // not a DynamoDB Streams on-failure record
)

// Entry is one DLQ message as Inspect decodes it.
type Entry struct {
	MessageID    string    `json:"message_id"`
	SentAt       time.Time `json:"sent_at"`
	ReceiveCount int       `json:"receive_count"`
	State        string    `json:"state"`
	Problem      string    `json:"problem,omitempty"` // why a message is malformed
	Body         string    `json:"body,omitempty"`    // the raw body of a malformed message (of every message with ShowBody)
	Batch
	raw string // the body, always
}

// ShowBody sets Body on every entry (valid records too): `dlq inspect --show-body`.
func ShowBody(entries []Entry) {
	for i := range entries {
		entries[i].Body = entries[i].raw
	}
}

// Batch is what an on-failure record says about the failed batch.
type Batch struct {
	Table         string         `json:"table,omitempty"`
	Shard         string         `json:"shard,omitempty"`
	Start         string         `json:"start_sequence_number,omitempty"`
	End           string         `json:"end_sequence_number,omitempty"`
	BatchSize     int            `json:"batch_size,omitempty"`
	Condition     string         `json:"condition,omitempty"`
	Function      string         `json:"function,omitempty"`
	FailedAt      *time.Time     `json:"failed_at,omitempty"`
	ExpiresAt     *time.Time     `json:"expires_at,omitempty"`
	TimeLeft      *time.Duration `json:"time_left_ns,omitempty"`
	StreamArn     string         `json:"stream_arn,omitempty"`
	FunctionError string         `json:"function_error,omitempty"`
	// The rest of the record (Lambda developer guide, "Retain discarded
	// records for a DynamoDB event source in Lambda"; see onfailure).
	RequestID       string     `json:"request_id,omitempty"`
	InvokeCount     int        `json:"approximate_invoke_count,omitempty"`
	StatusCode      int        `json:"status_code,omitempty"`
	ExecutedVersion string     `json:"executed_version,omitempty"`
	Version         string     `json:"version,omitempty"`
	FirstArrival    *time.Time `json:"approximate_arrival_of_first_record,omitempty"`
	LastArrival     *time.Time `json:"approximate_arrival_of_last_record,omitempty"`
}

func batchOf(r onfailure.Record, now time.Time) Batch {
	b := r.Batch
	exp, left := b.ExpiresAt(), b.TimeLeft(now)
	ts := r.Timestamp
	return Batch{
		Table: b.Table(), Shard: b.ShardID, Start: b.StartSequenceNumber, End: b.EndSequenceNumber,
		BatchSize: b.BatchSize, Condition: r.RequestContext.Condition, Function: r.RequestContext.FunctionArn,
		FailedAt: &ts, ExpiresAt: &exp, TimeLeft: &left, StreamArn: b.StreamArn, FunctionError: r.ResponseContext.FunctionError,
		RequestID: r.RequestContext.RequestID, InvokeCount: r.RequestContext.ApproximateInvokeCount,
		StatusCode: r.ResponseContext.StatusCode, ExecutedVersion: r.ResponseContext.ExecutedVersion, Version: r.Version,
		FirstArrival: timeOrNil(b.ApproximateArrivalOfFirstRecord), LastArrival: timeOrNil(b.ApproximateArrivalOfLastRecord),
	}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Inspect lists up to max messages (0: all) of the DLQ without consuming
// them (see Queue for how visibility is handled) and decodes each. Every
// message received is listed: one that is not an on-failure record is
// StateMalformed with its body, never dropped. critical is the time-left
// threshold under which a batch is StateCritical.
func Inspect(ctx context.Context, q Queue, max int, now time.Time, critical time.Duration) ([]Entry, error) {
	msgs, err := q.peek(ctx, max)
	entries := make([]Entry, 0, len(msgs))
	for _, m := range msgs {
		entries = append(entries, entryOf(m, now, critical))
	}
	return entries, err
}

func entryOf(m types.Message, now time.Time, critical time.Duration) Entry {
	e := Entry{MessageID: aws.ToString(m.MessageId), SentAt: sentAt(m), ReceiveCount: receiveCount(m), raw: aws.ToString(m.Body)}
	rec, err := onfailure.Decode(aws.ToString(m.Body))
	if err != nil {
		e.State, e.Problem, e.Body = StateMalformed, err.Error(), aws.ToString(m.Body)
		return e
	}
	e.Batch = batchOf(rec, now)
	switch left := *e.TimeLeft; {
	case left <= 0:
		e.State = StateLost
	case left < critical:
		e.State = StateCritical
	default:
		e.State = StateOK
	}
	return e
}
