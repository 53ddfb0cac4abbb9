package redrive

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/internal/testctx"
)

// shard is a fake shard for the decision logic of ReadBatch (the emulator
// cannot trim records, page emptily or expire iterators): records from
// first, pages of pageSize, optional empty pages before each page, and
// errors on demand.
type shard struct {
	first, last  int
	pageSize     int
	emptyBefore  int   // empty pages before each page with records
	iteratorErr  error // from GetShardIterator
	expireOnce   bool  // the first GetRecords answers ExpiredIteratorException
	closedAfter  int   // the shard closes (no NextShardIterator) after this sequence number; 0: open
	iterators    []string
	emptyPending int
	limits       []*int32 // the Limit of every GetRecords
}

func (s *shard) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	if s.iteratorErr != nil {
		return nil, s.iteratorErr
	}
	seq, _ := strconv.Atoi(aws.ToString(in.SequenceNumber))
	if in.ShardIteratorType == types.ShardIteratorTypeAfterSequenceNumber {
		seq++
	}
	seq = max(seq, s.first)
	s.iterators = append(s.iterators, string(in.ShardIteratorType)+" "+aws.ToString(in.SequenceNumber))
	s.emptyPending = s.emptyBefore
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(strconv.Itoa(seq))}, nil
}

func (s *shard) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	if s.expireOnce {
		s.expireOnce = false
		return nil, &types.ExpiredIteratorException{Message: aws.String("expired")}
	}
	s.limits = append(s.limits, in.Limit)
	at, _ := strconv.Atoi(aws.ToString(in.ShardIterator))
	if s.emptyPending > 0 {
		s.emptyPending--
		return &dynamodbstreams.GetRecordsOutput{NextShardIterator: in.ShardIterator}, nil
	}
	var recs []types.Record
	seq := at
	for ; seq <= s.last && len(recs) < s.pageSize; seq++ {
		recs = append(recs, types.Record{EventID: aws.String("e" + strconv.Itoa(seq)), Dynamodb: &types.StreamRecord{SequenceNumber: aws.String(strconv.Itoa(seq))}})
	}
	s.emptyPending = s.emptyBefore
	out := &dynamodbstreams.GetRecordsOutput{Records: recs, NextShardIterator: aws.String(strconv.Itoa(seq))}
	if s.closedAfter > 0 && seq > s.closedAfter {
		out.NextShardIterator = nil
	}
	return out, nil
}

func batch(start, end int) onfailure.BatchInfo {
	return onfailure.BatchInfo{ShardID: "shardId-1", StartSequenceNumber: strconv.Itoa(start), EndSequenceNumber: strconv.Itoa(end),
		StreamArn: "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-order/stream/2026-01-01T00:00:00.000"}
}

func seqs(recs []types.Record) string {
	var s []string
	for _, r := range recs {
		s = append(s, aws.ToString(r.Dynamodb.SequenceNumber))
	}
	return strings.Join(s, ",")
}

func TestReadBatchAcrossPages(t *testing.T) {
	s := &shard{first: 100, last: 200, pageSize: 3, emptyBefore: 2}
	recs, err := ReadBatch(testctx.Bounded(t), s, batch(105, 112))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := seqs(recs), "105,106,107,108,109,110,111,112"; got != want {
		t.Errorf("read %s, want %s: AT the start, through empty pages and NextShardIterator, up to the end", got, want)
	}
	if s.iterators[0] != "AT_SEQUENCE_NUMBER 105" {
		t.Errorf("first iterator %s, want AT_SEQUENCE_NUMBER 105", s.iterators[0])
	}
}

func TestReadBatchRenewsAnExpiredIterator(t *testing.T) {
	s := &shard{first: 100, last: 200, pageSize: 10, expireOnce: true}
	recs, err := ReadBatch(testctx.Bounded(t), s, batch(100, 104))
	if err != nil {
		t.Fatal(err)
	}
	if seqs(recs) != "100,101,102,103,104" || len(s.iterators) != 2 || s.iterators[1] != "AT_SEQUENCE_NUMBER 100" {
		t.Errorf("read %s with iterators %v", seqs(recs), s.iterators)
	}
}

func TestReadBatchExpired_DDB_STREAM_05(t *testing.T) {
	for name, tc := range map[string]struct {
		s    *shard
		want string
	}{
		"trimmed":       {&shard{iteratorErr: &types.TrimmedDataAccessException{Message: aws.String("trimmed")}}, "TrimmedDataAccessException"},
		"shard gone":    {&shard{iteratorErr: &types.ResourceNotFoundException{Message: aws.String("no shard")}}, "ResourceNotFoundException"},
		"start trimmed": {&shard{first: 103, last: 200, pageSize: 10}, "starts at 103 now, the batch started at 100"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadBatch(testctx.Bounded(t), tc.s, batch(100, 105))
			if !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrExpired saying %q", err, tc.want)
			}
		})
	}
}

func TestReadBatchIncomplete(t *testing.T) {
	for name, tc := range map[string]struct {
		s    *shard
		want string
	}{
		"never reaches the end": {&shard{first: 100, last: 102, pageSize: 10}, "not reached after 10 empty pages (3 record(s) read)"},
		"shard closes first":    {&shard{first: 100, last: 102, pageSize: 10, closedAfter: 102}, "closed before end sequence number 105"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadBatch(testctx.Bounded(t), tc.s, batch(100, 105))
			if err == nil || errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a plain error saying %q", err, tc.want)
			}
		})
	}
}
