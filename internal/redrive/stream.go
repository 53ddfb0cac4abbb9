package redrive

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynops/dynops/internal/onfailure"
)

// Streams is the part of the DynamoDB Streams API a redrive reads with.
type Streams interface {
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// ErrExpired is wrapped when the stream no longer holds a batch's records.
var ErrExpired = errors.New("records are no longer in the stream")

// maxEmptyPages bounds the GetRecords pages without records read before the
// end sequence number is given up on (an open shard may answer a few empty
// pages before the data; a batch that never comes is an error, not a hang).
const maxEmptyPages = 10

// ReadBatch re-reads the failed batch from its shard: GetShardIterator
// AT_SEQUENCE_NUMBER the start, then GetRecords across NextShardIterator pages
// until the end sequence number. The stream's region comes from its ARN.
// Records trimmed from the stream (TrimmedDataAccessException, a shard or
// stream that no longer exists, or a first record after the start) give an
// error wrapping ErrExpired.
func ReadBatch(ctx context.Context, s Streams, b onfailure.BatchInfo) ([]types.Record, error) {
	inRegion := func(o *dynamodbstreams.Options) {
		if r := b.Region(); r != "" {
			o.Region = r
		}
	}
	iterator := func(typ types.ShardIteratorType, seq string) (*string, error) {
		out, err := s.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: &b.StreamArn, ShardId: &b.ShardID, ShardIteratorType: typ, SequenceNumber: &seq,
		}, inRegion)
		if err != nil {
			return nil, streamError(fmt.Sprintf("GetShardIterator %s %s on %s", typ, seq, b.ShardID), err)
		}
		return out.ShardIterator, nil
	}
	it, err := iterator(types.ShardIteratorTypeAtSequenceNumber, b.StartSequenceNumber)
	if err != nil {
		return nil, err
	}
	// Pages of the batch's size: the batch in one page when it is whole,
	// rather than up to 1,000 records past its end.
	var limit *int32
	if b.BatchSize > 0 && b.BatchSize < 1000 {
		limit = aws.Int32(int32(b.BatchSize))
	}
	var recs []types.Record
	empty := 0
	for it != nil {
		out, err := s.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: limit}, inRegion)
		var expiredIt *types.ExpiredIteratorException
		if errors.As(err, &expiredIt) { // a slow page: continue after what was read
			typ, seq := types.ShardIteratorTypeAtSequenceNumber, b.StartSequenceNumber
			if len(recs) > 0 {
				typ, seq = types.ShardIteratorTypeAfterSequenceNumber, aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber)
			}
			if it, err = iterator(typ, seq); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, streamError("GetRecords on "+b.ShardID, err)
		}
		if len(out.Records) == 0 {
			if empty++; empty >= maxEmptyPages {
				return nil, fmt.Errorf("shard %s: end sequence number %s not reached after %d empty pages (%d record(s) read)", b.ShardID, b.EndSequenceNumber, empty, len(recs))
			}
		} else {
			empty = 0
		}
		for _, r := range out.Records {
			if r.Dynamodb == nil {
				return nil, fmt.Errorf("shard %s: a stream record without a dynamodb section", b.ShardID)
			}
			seq := aws.ToString(r.Dynamodb.SequenceNumber)
			if len(recs) == 0 && onfailure.CompareSequence(seq, b.StartSequenceNumber) != 0 {
				return nil, fmt.Errorf("%w: shard %s starts at %s now, the batch started at %s", ErrExpired, b.ShardID, seq, b.StartSequenceNumber)
			}
			if onfailure.CompareSequence(seq, b.EndSequenceNumber) > 0 {
				return recs, nil
			}
			recs = append(recs, r)
			if seq == b.EndSequenceNumber {
				return recs, nil
			}
		}
		it = out.NextShardIterator
	}
	return nil, fmt.Errorf("shard %s closed before end sequence number %s (%d record(s) read)", b.ShardID, b.EndSequenceNumber, len(recs))
}

func streamError(what string, err error) error {
	var trimmed *types.TrimmedDataAccessException
	var gone *types.ResourceNotFoundException
	if errors.As(err, &trimmed) || errors.As(err, &gone) {
		return fmt.Errorf("%w: %s: %v", ErrExpired, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
