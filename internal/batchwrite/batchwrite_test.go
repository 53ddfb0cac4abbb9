package batchwrite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/batchwrite"
)

// fakeDynamo is a BatchWriteItem endpoint over HTTP that enforces DynamoDB's
// request limits the way the service does: a body over limit bytes is
// refused with 413 (as AWS and dynalite refuse a 45 MB request), more than
// 25 requests with a ValidationException. It records every body length.
type fakeDynamo struct {
	limit  int
	mu     sync.Mutex
	bodies []int
	items  map[string]bool
}

// ServeHTTP answers with the CRC32 header the DynamoDB client checks.
func (f *fakeDynamo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	f.serve(rec, r)
	out := rec.Body.Bytes()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(out)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}

func (f *fakeDynamo) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, len(body))
	if len(body) > f.limit {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprint(w, `{"__type":"com.amazon.coral.service#RequestEntityTooLarge","message":"Request entity too large"}`)
		return
	}
	var in struct {
		RequestItems map[string][]struct {
			PutRequest *struct {
				Item map[string]map[string]any
			}
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":%q}`, err.Error())
		return
	}
	for _, reqs := range in.RequestItems {
		if len(reqs) > 25 {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"Too many items requested for the BatchWriteItem call"}`)
			return
		}
		for _, r := range reqs {
			f.items[r.PutRequest.Item["id"]["S"].(string)] = true
		}
	}
	fmt.Fprint(w, `{"UnprocessedItems":{}}`)
}

func client(t *testing.T, h http.Handler) *dynamodb.Client {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg, err := awsconfig.Load(context.Background(), awsconfig.Options{Region: "eu-west-1", EndpointURL: srv.URL, MaxAttempts: 1})
	require.NoError(t, err)
	return dynamodb.NewFromConfig(cfg)
}

// control is a string of n control characters: 1 byte stored, 6 on the wire.
func control(n int) string { return strings.Repeat("\x01", n) }

func put(id string, attrs map[string]types.AttributeValue) types.WriteRequest {
	item := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}
	for k, v := range attrs {
		item[k] = v
	}
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
}

// RequestSize is the exact body the SDK sends, for every attribute type and
// every kind of escaping.
func TestRequestSizeIsTheEncodedBody(t *testing.T) {
	f := &fakeDynamo{limit: 1 << 30, items: map[string]bool{}}
	db := client(t, f)
	values := map[string]types.AttributeValue{
		"ascii":                     &types.AttributeValueMemberS{Value: "hello world"},
		"control":                   &types.AttributeValueMemberS{Value: control(50) + "\n\t\r\"\\\x7f\x1f"},
		"unicode":                   &types.AttributeValueMemberS{Value: "日本語 \u2028\u2029 😀"},
		"invalid":                   &types.AttributeValueMemberS{Value: "a\xffb"},
		"html":                      &types.AttributeValueMemberS{Value: "<a href='x'>&</a>"},
		"n":                         &types.AttributeValueMemberN{Value: "-12.5e3"},
		"b":                         &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 3, 4}},
		"bool":                      &types.AttributeValueMemberBOOL{Value: false},
		"null":                      &types.AttributeValueMemberNULL{Value: true},
		"ss":                        &types.AttributeValueMemberSS{Value: []string{"a", "\x02b"}},
		"ns":                        &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs":                        &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l":                         &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k\x03": &types.AttributeValueMemberN{Value: "1"}}}}},
		"m":                         &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"nested": &types.AttributeValueMemberL{}}},
		"name \x04 with \"quotes\"": &types.AttributeValueMemberS{Value: ""},
	}
	for name, v := range values {
		reqs := []types.WriteRequest{put("a", map[string]types.AttributeValue{name: v}), put("b\x05", nil)}
		_, err := db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"dev-hoge-user": reqs}})
		require.NoError(t, err)
		assert.Equal(t, f.bodies[len(f.bodies)-1], batchwrite.RequestSize("dev-hoge-user", reqs), name)
	}
}

// TestWriteSizesBatchesByEncodedRequest: items of control characters, small
// when stored and six times larger on the wire, are grouped so that no
// request passes 16 MB; nothing is refused, every item is written once.
func TestWriteSizesBatchesByEncodedRequest(t *testing.T) {
	f := &fakeDynamo{limit: batchwrite.MaxRequestBytes, items: map[string]bool{}}
	db := client(t, f)
	var reqs []types.WriteRequest
	for i := 0; i < 40; i++ {
		reqs = append(reqs, put(fmt.Sprint(i), map[string]types.AttributeValue{"blob": &types.AttributeValueMemberS{Value: control(300 << 10)}}))
	}
	n, err := batchwrite.Write(context.Background(), db, "dev-hoge-user", reqs, batchwrite.DefaultBackoff(), batchwrite.DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 40, n)
	assert.Len(t, f.items, 40)
	for _, b := range f.bodies {
		assert.LessOrEqual(t, b, batchwrite.MaxRequestBytes)
	}
	assert.Greater(t, len(f.bodies), 40/25+1, "more batches than a count-only grouping")
	t.Logf("40 items of 300 KiB control characters: %d requests, largest %d bytes", len(f.bodies), maxOf(f.bodies))
}

// TestRefusedBatchIsRetriedInHalves: when the service refuses a batch for
// its size (a lower limit than ours, e.g. a proxy), Write splits it until
// each part passes; an item refused alone is an error naming it.
func TestRefusedBatchIsRetriedInHalves(t *testing.T) {
	f := &fakeDynamo{limit: 200 << 10, items: map[string]bool{}}
	db := client(t, f)
	var reqs []types.WriteRequest
	for i := 0; i < 25; i++ {
		reqs = append(reqs, put(fmt.Sprint(i), map[string]types.AttributeValue{"s": &types.AttributeValueMemberS{Value: control(10 << 10)}}))
	}
	n, err := batchwrite.Write(context.Background(), db, "dev-hoge-user", reqs, batchwrite.DefaultBackoff(), batchwrite.DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 25, n)
	assert.Len(t, f.items, 25)

	big := []types.WriteRequest{put("huge", map[string]types.AttributeValue{"s": &types.AttributeValueMemberS{Value: control(40 << 10)}})}
	_, err = batchwrite.Write(context.Background(), db, "dev-hoge-user", big, batchwrite.DefaultBackoff(), batchwrite.DefaultLimits())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one item alone is refused as too large")
}

func TestSplitLimits(t *testing.T) {
	for _, c := range []struct {
		items, size, maxItems, maxBytes int
	}{{100, 10, 25, 1 << 20}, {7, 1000, 25, 3000}, {30, 0, 25, 1 << 20}, {1, 5000, 25, 100}} {
		var reqs []types.WriteRequest
		for i := 0; i < c.items; i++ {
			reqs = append(reqs, put(fmt.Sprint(i), map[string]types.AttributeValue{"s": &types.AttributeValueMemberS{Value: control(c.size)}}))
		}
		batches := batchwrite.Split("t", reqs, batchwrite.Limits{Items: c.maxItems, Bytes: c.maxBytes})
		total := 0
		for _, b := range batches {
			total += len(b)
			assert.LessOrEqual(t, len(b), c.maxItems)
			if len(b) > 1 {
				assert.LessOrEqual(t, batchwrite.RequestSize("t", b), c.maxBytes, "%+v", c)
			}
		}
		assert.Equal(t, c.items, total, "%+v", c)
	}
}

func TestTooLarge(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"RequestEntityTooLarge":     {&smithy.GenericAPIError{Code: "RequestEntityTooLarge"}, true},
		"ValidationException size":  {&smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}, true},
		"ValidationException other": {&smithy.GenericAPIError{Code: "ValidationException", Message: "Provided list of item keys contains duplicates"}, false},
		"throttled":                 {&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, false},
		"plain":                     {fmt.Errorf("boom"), false},
	}
	for name, c := range cases {
		assert.Equal(t, c.want, batchwrite.TooLarge(c.err), name)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

var _ = aws.String
var _ = time.Second
