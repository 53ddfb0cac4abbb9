// Package onfailure decodes the invocation records Lambda sends to an
// on-failure destination (the DLQ, DDB-STREAM-04) when an event source mapping
// on a DynamoDB stream gives up on a batch. Such a record holds only metadata:
// which shard and sequence range failed, when, and why; the stream records
// themselves stay in the stream, readable for 24 hours.
//
// Format (Lambda developer guide, "Retain discarded records for a DynamoDB
// event source in Lambda"):
//
//	{"requestContext": {"requestId": "...", "functionArn": "arn:aws:lambda:...:function:f",
//	   "condition": "RetryAttemptsExhausted", "approximateInvokeCount": 1},
//	 "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
//	 "version": "1.0", "timestamp": "2019-11-14T00:13:49.717Z",
//	 "DDBStreamBatchInfo": {"shardId": "shardId-...", "startSequenceNumber": "800000000003126276362",
//	   "endSequenceNumber": "800000000003126276362", "approximateArrivalOfFirstRecord": "2019-11-14T00:13:19Z",
//	   "approximateArrivalOfLastRecord": "2019-11-14T00:13:19Z", "batchSize": 1,
//	   "streamArn": "arn:aws:dynamodb:us-east-2:123456789012:table/mytable/stream/2019-11-14T00:04:06.388"}}
package onfailure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Retention is how long DynamoDB Streams keeps a record (DDB-STREAM-05).
const Retention = 24 * time.Hour

// Record is one on-failure invocation record.
type Record struct {
	RequestContext  RequestContext  `json:"requestContext"`
	ResponseContext ResponseContext `json:"responseContext"`
	Version         string          `json:"version"`
	Timestamp       time.Time       `json:"timestamp"`
	Batch           *BatchInfo      `json:"DDBStreamBatchInfo,omitempty"`
}

// RequestContext says which function failed and why the batch was discarded.
type RequestContext struct {
	RequestID              string `json:"requestId"`
	FunctionArn            string `json:"functionArn"`
	Condition              string `json:"condition"` // e.g. RetryAttemptsExhausted, RecordAgeExceeded
	ApproximateInvokeCount int    `json:"approximateInvokeCount"`
}

// ResponseContext is the last invocation's result.
type ResponseContext struct {
	StatusCode      int    `json:"statusCode"`
	ExecutedVersion string `json:"executedVersion"`
	FunctionError   string `json:"functionError,omitempty"`
}

// BatchInfo locates the failed batch in the stream.
type BatchInfo struct {
	ShardID                         string    `json:"shardId"`
	StartSequenceNumber             string    `json:"startSequenceNumber"`
	EndSequenceNumber               string    `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord time.Time `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  time.Time `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int       `json:"batchSize"`
	StreamArn                       string    `json:"streamArn"`
}

// ErrMalformed is wrapped by Decode for bodies that are not a usable
// DynamoDB Streams on-failure record.
var ErrMalformed = errors.New("not a DynamoDB Streams on-failure record")

// Decode parses an SQS message body. A body that is not JSON, is the record of
// another event source (Kinesis, SQS, Kafka), or lacks the shard, sequence
// numbers or stream ARN is an error wrapping ErrMalformed that says what is wrong.
func Decode(body string) (Record, error) {
	var r Record
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: body is not JSON of the documented shape (%v)", ErrMalformed, err)
	}
	if r.Batch == nil {
		var other map[string]json.RawMessage
		_ = json.Unmarshal([]byte(body), &other)
		for _, k := range []string{"KinesisBatchInfo", "KafkaBatchInfo", "MSKBatchInfo"} {
			if _, ok := other[k]; ok {
				return Record{}, fmt.Errorf("%w: it has %s (another event source)", ErrMalformed, k)
			}
		}
		return Record{}, fmt.Errorf("%w: no DDBStreamBatchInfo", ErrMalformed)
	}
	b := r.Batch
	var missing []string
	for name, v := range map[string]string{"shardId": b.ShardID, "startSequenceNumber": b.StartSequenceNumber, "endSequenceNumber": b.EndSequenceNumber, "streamArn": b.StreamArn} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return Record{}, fmt.Errorf("%w: DDBStreamBatchInfo lacks %s", ErrMalformed, strings.Join(missing, ", "))
	}
	if !isSequenceNumber(b.StartSequenceNumber) || !isSequenceNumber(b.EndSequenceNumber) {
		return Record{}, fmt.Errorf("%w: sequence numbers %q..%q are not decimal", ErrMalformed, b.StartSequenceNumber, b.EndSequenceNumber)
	}
	if CompareSequence(b.StartSequenceNumber, b.EndSequenceNumber) > 0 {
		return Record{}, fmt.Errorf("%w: startSequenceNumber %s is after endSequenceNumber %s", ErrMalformed, b.StartSequenceNumber, b.EndSequenceNumber)
	}
	if _, _, err := ParseStreamArn(b.StreamArn); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return r, nil
}

// Encode returns the record as Lambda writes it (for drills and tests).
func Encode(r Record) (string, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(r); err != nil {
		return "", fmt.Errorf("encoding on-failure record: %w", err)
	}
	return strings.TrimSpace(buf.String()), nil
}

// ParseStreamArn returns the region and table of a stream ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL).
func ParseStreamArn(arn string) (region, table string, err error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "dynamodb" {
		return "", "", fmt.Errorf("streamArn %q is not a DynamoDB stream ARN", arn)
	}
	res := strings.Split(parts[5], "/")
	if len(res) != 4 || res[0] != "table" || res[2] != "stream" || res[1] == "" {
		return "", "", fmt.Errorf("streamArn %q is not a DynamoDB stream ARN (want table/NAME/stream/LABEL)", arn)
	}
	return parts[3], res[1], nil
}

// Table is the table whose stream the batch came from.
func (b BatchInfo) Table() string {
	_, t, _ := ParseStreamArn(b.StreamArn)
	return t
}

// Region is the stream's region.
func (b BatchInfo) Region() string {
	r, _, _ := ParseStreamArn(b.StreamArn)
	return r
}

// ExpiresAt is when the batch's first record falls out of the stream.
func (b BatchInfo) ExpiresAt() time.Time {
	return b.ApproximateArrivalOfFirstRecord.Add(Retention)
}

// TimeLeft is how long the batch stays readable after now (negative: gone).
func (b BatchInfo) TimeLeft(now time.Time) time.Duration {
	return b.ExpiresAt().Sub(now)
}

// CompareSequence orders two stream sequence numbers (decimal strings of any
// length, without leading zeros): -1, 0 or 1.
func CompareSequence(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func isSequenceNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
