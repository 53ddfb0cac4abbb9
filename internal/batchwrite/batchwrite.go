// Package batchwrite writes items with BatchWriteItem within DynamoDB's
// limits: at most 25 requests and 16 MB of request body per call, measured
// on the encoded request (an item of control characters takes six bytes per
// character on the wire), retrying UnprocessedItems with backoff
// (DDB-API-02), and splitting a batch DynamoDB refuses as too large in
// halves until it fits.
package batchwrite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/ddbjson"
)

// DynamoDB's BatchWriteItem limits.
const (
	MaxItems        = 25
	MaxRequestBytes = 16 << 20
)

// Backoff is how batch calls retry what DynamoDB left unprocessed
// (DDB-API-02): up to Attempts calls, sleeping a random time up to
// Base x 2^n (at most Max) between them.
type Backoff struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultBackoff retries for about half a minute in the worst case.
func DefaultBackoff() Backoff {
	return Backoff{Attempts: 10, Base: 50 * time.Millisecond, Max: 5 * time.Second}
}

// Sleep waits before attempt n+1 (full jitter), or until ctx ends.
func (b Backoff) Sleep(ctx context.Context, attempt int) error {
	d := min(b.Base<<attempt, b.Max)
	if d > 0 {
		d = time.Duration(rand.Int64N(int64(d))) + 1
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Writer is the part of the API Write uses.
type Writer interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Limits bound one BatchWriteItem call (tests lower them).
type Limits struct {
	Items int
	Bytes int
}

// DefaultLimits are DynamoDB's.
func DefaultLimits() Limits { return Limits{Items: MaxItems, Bytes: MaxRequestBytes} }

// Write writes reqs (any number) to table in batches that fit l, each
// retried as writeOne does. It returns how many requests were written before
// an error.
func Write(ctx context.Context, db Writer, table string, reqs []types.WriteRequest, bo Backoff, l Limits) (int, error) {
	done := 0
	for _, b := range Split(table, reqs, l) {
		if err := writeSplitting(ctx, db, table, b, bo); err != nil {
			return done, err
		}
		done += len(b)
	}
	return done, nil
}

// WriteBatch writes one batch of Split (at most Items requests within
// Bytes), retrying what DynamoDB leaves unprocessed with bo and writing each
// half on its own when DynamoDB refuses the batch as too large. Callers that
// write many batches at once split first and hand the batches to workers.
func WriteBatch(ctx context.Context, db Writer, table string, batch []types.WriteRequest, bo Backoff) error {
	return writeSplitting(ctx, db, table, batch, bo)
}

// Split groups reqs into batches of at most l.Items requests whose encoded
// BatchWriteItem body stays within l.Bytes. A request too large on its own
// goes alone (DynamoDB will say why).
func Split(table string, reqs []types.WriteRequest, l Limits) [][]types.WriteRequest {
	base := RequestSize(table, nil)
	var out [][]types.WriteRequest
	var cur []types.WriteRequest
	size := base
	for _, r := range reqs {
		n := reqSize(r) + 1 // the comma
		if len(cur) > 0 && (len(cur) >= l.Items || size+n > l.Bytes) {
			out = append(out, cur)
			cur, size = nil, base
		}
		cur = append(cur, r)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// RequestSize is the length of the BatchWriteItem body for reqs to table:
// {"RequestItems":{"TABLE":[...]}}.
func RequestSize(table string, reqs []types.WriteRequest) int {
	n := len(`{"RequestItems":{`) + ddbjson.StringSize(table) + len(`:[]}}`)
	for i, r := range reqs {
		if i > 0 {
			n++
		}
		n += reqSize(r)
	}
	return n
}

func reqSize(r types.WriteRequest) int {
	switch {
	case r.PutRequest != nil:
		return len(`{"PutRequest":{"Item":}}`) + ddbjson.ItemSize(r.PutRequest.Item)
	case r.DeleteRequest != nil:
		return len(`{"DeleteRequest":{"Key":}}`) + ddbjson.ItemSize(r.DeleteRequest.Key)
	}
	return 2
}

// writeSplitting writes one batch; when DynamoDB refuses it as too large it
// writes each half the same way.
func writeSplitting(ctx context.Context, db Writer, table string, reqs []types.WriteRequest, bo Backoff) error {
	err := writeOne(ctx, db, table, reqs, bo)
	if err == nil || !TooLarge(err) {
		return err
	}
	if len(reqs) == 1 {
		return fmt.Errorf("one item alone is refused as too large (%d bytes encoded): %w", reqSize(reqs[0]), err)
	}
	half := len(reqs) / 2
	if err := writeSplitting(ctx, db, table, reqs[:half], bo); err != nil {
		return err
	}
	return writeSplitting(ctx, db, table, reqs[half:], bo)
}

// writeOne writes up to 25 requests with BatchWriteItem, retrying
// UnprocessedItems with backoff until none are left or attempts run out.
func writeOne(ctx context.Context, db Writer, table string, reqs []types.WriteRequest, bo Backoff) error {
	pending := map[string][]types.WriteRequest{table: reqs}
	for attempt := 0; ; attempt++ {
		out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return fmt.Errorf("BatchWriteItem to %s: %w", table, err)
		}
		left := out.UnprocessedItems[table]
		if len(left) == 0 {
			return nil
		}
		if attempt+1 >= bo.Attempts {
			return fmt.Errorf("BatchWriteItem to %s: %d of %d item(s) still unprocessed after %d attempts (throttled?): retry later",
				table, len(left), len(reqs), bo.Attempts)
		}
		if err := bo.Sleep(ctx, attempt); err != nil {
			return err
		}
		pending = map[string][]types.WriteRequest{table: left}
	}
}

// TooLarge tells a request refused for its size: HTTP 413,
// RequestEntityTooLarge, or a ValidationException about the request size.
func TooLarge(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestEntityTooLarge {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "RequestEntityTooLarge", "RequestEntityTooLargeException":
			return true
		case "ValidationException":
			msg := strings.ToLower(ae.ErrorMessage())
			return strings.Contains(msg, "size") && (strings.Contains(msg, "exceed") || strings.Contains(msg, "too large") || strings.Contains(msg, "limit"))
		}
	}
	return false
}
