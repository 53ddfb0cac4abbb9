package repair

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/tablediff"
)

// Streams is the part of the DynamoDB Streams API a scope reads.
type Streams interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// StreamRetention is how long DynamoDB Streams keeps a record.
const StreamRetention = 24 * time.Hour

// maxEmptyStreamPages: an open shard may answer a few empty pages before its
// tip; this many in a row is the tip.
const maxEmptyStreamPages = 3

// ScopeFromStream reads the table's stream (every shard, from its oldest
// record to now) into a scope of the window [since, until]: each record's
// keys at its ApproximateCreationDateTime (rounded down to the second by
// DynamoDB). The stream must cover the window: enabled before since, and
// since within its 24-hour retention; otherwise it refuses (ErrScope)
// rather than miss a damaged key.
func ScopeFromStream(ctx context.Context, db tablediff.Describer, s Streams, table string, since, until, now time.Time) (*Scope, error) {
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", table, err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if spec := d.Table.StreamSpecification; arn == "" || spec == nil || !aws.ToBool(spec.StreamEnabled) {
		return nil, fmt.Errorf("%w: %s has no stream enabled (DescribeTable), so --damage-stream cannot list the keys written in the window; give them with --damage-keys FILE (from the application's logs or CloudTrail data events)", ErrScope, table)
	}
	if since.IsZero() {
		return nil, fmt.Errorf("%w: the damage window has no start: give --damage-since TIME", ErrScope)
	}
	if since.Before(now.Add(-StreamRetention)) {
		return nil, fmt.Errorf("%w: the damage window starts %s, more than 24 hours ago: the stream of %s no longer holds its records; give the keys with --damage-keys FILE", ErrScope, since.UTC().Format(time.RFC3339), table)
	}
	sc, err := NewScope(since, until, "stream "+arn, true)
	if err != nil {
		return nil, err
	}
	keyNames, err := tableKey(ctx, db, table)
	if err != nil {
		return nil, err
	}
	var shards []stypes.Shard
	var start *string
	for {
		out, err := s.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn, ExclusiveStartShardId: start})
		if err != nil {
			return nil, fmt.Errorf("describing the stream %s: %w", arn, err)
		}
		sd := out.StreamDescription
		if c := sd.CreationRequestDateTime; start == nil && c != nil && c.After(since) {
			return nil, fmt.Errorf("%w: the stream of %s was enabled at %s, after the damage window starts (%s): it cannot list the keys written before; give them with --damage-keys FILE",
				ErrScope, table, c.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
		}
		shards = append(shards, sd.Shards...)
		if start = sd.LastEvaluatedShardId; start == nil {
			break
		}
	}
	for _, sh := range shards {
		if err := readShardKeys(ctx, s, arn, aws.ToString(sh.ShardId), keyNames, now, sc); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// readShardKeys adds the keys of one shard's records to sc, from its oldest
// record to its tip (or the first record after now: later ones cannot matter).
func readShardKeys(ctx context.Context, s Streams, arn, shard string, keyNames []string, now time.Time, sc *Scope) error {
	it, err := s.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: &shard,
		ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		return fmt.Errorf("getting an iterator on shard %s of %s: %w", shard, arn, err)
	}
	iter := it.ShardIterator
	for empty := 0; iter != nil && empty < maxEmptyStreamPages; {
		out, err := s.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(1000)})
		var trimmed *stypes.TrimmedDataAccessException
		if errors.As(err, &trimmed) {
			return fmt.Errorf("%w: shard %s of %s: records were trimmed while reading (%v); give the keys with --damage-keys FILE", ErrScope, shard, arn, err)
		}
		if err != nil {
			return fmt.Errorf("reading shard %s of %s: %w", shard, arn, err)
		}
		if len(out.Records) == 0 {
			empty++
		} else {
			empty = 0
		}
		for _, r := range out.Records {
			if r.Dynamodb == nil || r.Dynamodb.ApproximateCreationDateTime == nil {
				return fmt.Errorf("%w: shard %s of %s: a record without keys or ApproximateCreationDateTime", ErrScope, shard, arn)
			}
			t := *r.Dynamodb.ApproximateCreationDateTime
			if t.After(now.Add(time.Second)) {
				return nil
			}
			key, err := streamKey(r.Dynamodb.Keys, keyNames)
			if err != nil {
				return fmt.Errorf("shard %s of %s: %w", shard, arn, err)
			}
			sc.Add(key, t)
		}
		iter = out.NextShardIterator
	}
	return nil
}

// streamKey encodes a stream record's keys as tablediff.EncodeKey does.
func streamKey(keys map[string]stypes.AttributeValue, keyNames []string) ([]byte, error) {
	item, err := ddbjson.FromStream(keys)
	if err != nil {
		return nil, err
	}
	return tablediff.EncodeKey(item, keyNames)
}
