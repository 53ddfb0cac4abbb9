// Package esm does, for drills and tests, what a Lambda event source mapping
// on a DynamoDB stream does and moto's cannot (it would need Docker to run the
// function): read the shard in batches, invoke the function synchronously
// with the event, retry, and when retries are exhausted send the documented
// on-failure record (internal/onfailure) to the DLQ. Records and positions are
// real: they come from the emulator's stream.
package esm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/redrive"
)

// Account is the emulator's account ID.
const Account = "123456789012"

// FunctionArn is the ARN of function name in region on the emulator's account.
func FunctionArn(region, name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, Account, name)
}

// Shard is the first shard of a table's stream.
type Shard struct {
	StreamArn string
	ShardID   string
}

// StreamShard returns the stream ARN and first shard of a stream.
func StreamShard(ctx context.Context, c *dynamodbstreams.Client, streamArn string) (Shard, error) {
	out, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &streamArn})
	if err != nil {
		return Shard{}, fmt.Errorf("DescribeStream %s: %w", streamArn, err)
	}
	if len(out.StreamDescription.Shards) == 0 {
		return Shard{}, fmt.Errorf("stream %s has no shard", streamArn)
	}
	return Shard{StreamArn: streamArn, ShardID: aws.ToString(out.StreamDescription.Shards[0].ShardId)}, nil
}

// ReadAll returns every record of the shard, from TRIM_HORIZON to the last one.
func ReadAll(ctx context.Context, c *dynamodbstreams.Client, s Shard) ([]types.Record, error) {
	it, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: &s.StreamArn, ShardId: &s.ShardID, ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
	})
	if err != nil {
		return nil, fmt.Errorf("GetShardIterator TRIM_HORIZON: %w", err)
	}
	var recs []types.Record
	iter := it.ShardIterator
	for iter != nil {
		out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			return nil, fmt.Errorf("GetRecords: %w", err)
		}
		if len(out.Records) == 0 { // an open shard never ends: stop at the first empty page
			return recs, nil
		}
		recs = append(recs, out.Records...)
		iter = out.NextShardIterator
	}
	return recs, nil
}

// WaitForRecords reads the shard until it holds at least n records, up to
// timeout, and returns them; on timeout the error wraps poll.ErrTimeout and
// the records seen are returned with it. A drill waits for its writes
// instead of assuming them: a loaded emulator may answer late, and moto
// empties a stream that has an event source mapping on every write (it
// tries to run the function, cannot without Docker, and drops the records).
func WaitForRecords(ctx context.Context, c *dynamodbstreams.Client, s Shard, n int, timeout time.Duration) ([]types.Record, error) {
	var recs []types.Record
	err := poll.Until(ctx, poll.Options{
		Interval: 250 * time.Millisecond, MaxInterval: 2 * time.Second, Timeout: timeout,
		What: fmt.Sprintf("%d record(s) in stream %s", n, s.StreamArn), Flag: "--wait",
	}, func(ctx context.Context) (bool, string, error) {
		var err error
		recs, err = ReadAll(ctx, c, s)
		return err == nil && len(recs) >= n, fmt.Sprintf("%d record(s)", len(recs)), err
	})
	return recs, err
}

// OnFailure is the record Lambda writes for a failed batch (recs, in order)
// of shard s, given up at failedAt after invokeCount invocations.
func OnFailure(s Shard, recs []types.Record, functionArn, functionError string, invokeCount int, failedAt time.Time) onfailure.Record {
	first, last := recs[0].Dynamodb, recs[len(recs)-1].Dynamodb
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return onfailure.Record{
		RequestContext: onfailure.RequestContext{
			RequestID: hex.EncodeToString(id), FunctionArn: functionArn,
			Condition: "RetryAttemptsExhausted", ApproximateInvokeCount: invokeCount,
		},
		ResponseContext: onfailure.ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: functionError},
		Version:         "1.0",
		Timestamp:       failedAt.UTC().Truncate(time.Millisecond),
		Batch: &onfailure.BatchInfo{
			ShardID: s.ShardID, StreamArn: s.StreamArn,
			StartSequenceNumber: aws.ToString(first.SequenceNumber), EndSequenceNumber: aws.ToString(last.SequenceNumber),
			ApproximateArrivalOfFirstRecord: aws.ToTime(first.ApproximateCreationDateTime).UTC().Truncate(time.Second),
			ApproximateArrivalOfLastRecord:  aws.ToTime(last.ApproximateCreationDateTime).UTC().Truncate(time.Second),
			BatchSize:                       len(recs),
		},
	}
}

// Send puts an on-failure record into the DLQ as Lambda does (the JSON document as the body).
func Send(ctx context.Context, c *sqs.Client, queueURL string, r onfailure.Record) error {
	body, err := onfailure.Encode(r)
	if err != nil {
		return err
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: &body}); err != nil {
		return fmt.Errorf("sending the on-failure record to %s: %w", queueURL, err)
	}
	return nil
}

// Mapping is an event source mapping: stream -> function, with an on-failure DLQ.
type Mapping struct {
	Streams       *dynamodbstreams.Client
	Lambda        redrive.Invoker
	SQS           *sqs.Client
	Shard         Shard
	FunctionArn   string
	DLQ           string
	BatchSize     int
	RetryAttempts int // MaximumRetryAttempts
}

// Result counts what Poll did.
type Result struct {
	Batches     int // batches that succeeded
	Invocations int
	Failed      int // on-failure records sent
}

// Poll reads the shard once from TRIM_HORIZON in batches and delivers each
// batch like a mapping with ReportBatchItemFailures: on a reported failure it
// retries from that record, and after RetryAttempts retries it sends the
// on-failure record for what is left of the batch and moves on.
func (m Mapping) Poll(ctx context.Context) (Result, error) {
	var res Result
	recs, err := ReadAll(ctx, m.Streams, m.Shard)
	if err != nil {
		return res, err
	}
	fn := redrive.Function{Client: m.Lambda, Name: m.FunctionArn}
	for start := 0; start < len(recs); start += m.BatchSize {
		batch := recs[start:min(start+m.BatchSize, len(recs))]
		var lastErr error
		for attempt := 0; attempt <= m.RetryAttempts && len(batch) > 0; attempt++ {
			ev, err := redrive.BuildEvent(m.Shard.StreamArn, batch)
			if err != nil {
				return res, err
			}
			payload, err := json.Marshal(ev)
			if err != nil {
				return res, err
			}
			res.Invocations++
			_, lastErr = fn.Deliver(ctx, onfailure.Record{}, payload)
			if lastErr == nil {
				break
			}
			batch = fromFailure(batch, lastErr)
		}
		if lastErr == nil {
			res.Batches++
			continue
		}
		funcErr := ""
		var fe *redrive.FunctionError
		if errors.As(lastErr, &fe) {
			funcErr = fe.Kind
		}
		if err := Send(ctx, m.SQS, m.DLQ, OnFailure(m.Shard, batch, m.FunctionArn, funcErr, m.RetryAttempts+1, time.Now())); err != nil {
			return res, err
		}
		res.Failed++
	}
	return res, nil
}

// fromFailure is the rest of the batch from the first record the function
// reported failed (a checkpoint at it); the whole batch on any other error.
func fromFailure(batch []types.Record, err error) []types.Record {
	var bf *redrive.BatchItemFailures
	if !errors.As(err, &bf) {
		return batch
	}
	for j, r := range batch {
		if aws.ToString(r.Dynamodb.SequenceNumber) == bf.First {
			return batch[j:]
		}
	}
	return batch
}
