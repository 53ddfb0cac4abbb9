package tablediff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireTables serves DescribeTable and segmented Scan of two tables over
// HTTP (DynamoDB JSON 1.0), each segment in pages of perPage items. Every
// segment's first Scan is answered only once all of them have arrived, so
// the pages reach the client together: what a fast service does, and what
// the emulator (one page at a time) never does. It is a fake of the wire,
// not of the SDK: requests and responses go through the real client.
type wireTables struct {
	items, perPage, segments int
	mu                       sync.Mutex
	waiting                  int
	all                      chan struct{}
}

func (w *wireTables) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct {
		TableName         string
		Segment           int
		ExclusiveStartKey map[string]map[string]string
	}
	_ = json.Unmarshal(body, &in)
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable") {
		fmt.Fprintf(rw, `{"Table":{"TableName":%q,"TableStatus":"ACTIVE","ItemCount":%d,"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],`+
			`"AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}]}}`, in.TableName, w.items)
		return
	}
	start := 0
	if k := in.ExclusiveStartKey["id"]["S"]; k != "" {
		last, _ := strconv.Atoi(strings.TrimPrefix(k, fmt.Sprintf("s%d-", in.Segment)))
		start = last + 1
	} else {
		w.mu.Lock()
		if w.waiting++; w.waiting == w.segments {
			close(w.all)
		}
		w.mu.Unlock()
		<-w.all
	}
	per := w.items / (w.segments / 2) // two tables
	var b bytes.Buffer
	b.WriteString(`{"Items":[`)
	end := min(start+w.perPage, per)
	for i := start; i < end; i++ {
		if i > start {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":{"S":"s%d-%d"},"v":{"S":"%0200d"}}`, in.Segment, i, i)
	}
	fmt.Fprintf(&b, `],"Count":%d,"ScannedCount":%d`, end-start, end-start)
	if end < per {
		fmt.Fprintf(&b, `,"LastEvaluatedKey":{"id":{"S":"s%d-%d"}}`, in.Segment, end-1)
	}
	b.WriteString("}")
	_, _ = rw.Write(b.Bytes())
}

// slowBodies is an HTTP client whose response bodies take a moment to
// start reading, and which counts the bodies being read at once (first
// Read to Close).
type slowBodies struct {
	reading, most atomic.Int64
}

func (s *slowBodies) Do(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return resp, err
	}
	resp.Body = &slowBody{ReadCloser: resp.Body, s: s}
	return resp, nil
}

type slowBody struct {
	io.ReadCloser
	s              *slowBodies
	started, ended bool
}

func (b *slowBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		n := b.s.reading.Add(1)
		for m := b.s.most.Load(); n > m && !b.s.most.CompareAndSwap(m, n); m = b.s.most.Load() {
		}
		time.Sleep(50 * time.Millisecond) // overlapping reads overlap for sure
	}
	return b.ReadCloser.Read(p)
}

func (b *slowBody) Close() error {
	if b.started && !b.ended {
		b.ended = true
		b.s.reading.Add(-1)
	}
	return b.ReadCloser.Close()
}

// TestScanPagesDecodedAtOnceAreBounded_FakeService: the diff decodes at
// most its page slots' worth of Scan pages at once, however many segments'
// pages arrive together (8 here, one slot: one body read at a time), and
// still reads every item. A wire-level fake service: the emulator answers
// one page at a time, so its pages never arrive together.
func TestScanPagesDecodedAtOnceAreBounded_FakeService(t *testing.T) {
	for _, slots := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d slots", slots), func(t *testing.T) {
			const segments = 4 // per table: 8 segments in all
			srv := &wireTables{items: 400, perPage: 50, segments: 2 * segments, all: make(chan struct{})}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			bodies := &slowBodies{}
			db := dynamodb.New(dynamodb.Options{Region: "eu-west-1", BaseEndpoint: aws.String(ts.URL), HTTPClient: bodies,
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
			opts := Options{Source: "a", Target: "b", Segments: segments, TempDir: t.TempDir(), pages: newPageSlots(slots)}
			rep, err := Diff(context.Background(), db, opts)
			require.NoError(t, err)
			assert.Equal(t, int64(400), rep.SourceItems)
			assert.Equal(t, int64(400), rep.Same)
			assert.LessOrEqual(t, bodies.most.Load(), int64(slots), "Scan bodies read at once")
			assert.Equal(t, 0, len(opts.pages), "every slot given back")
		})
	}
}

// TestScanPageSlotGivenBackWhileTheSDKRetries_FakeService: a page whose first
// attempt is throttled gives its slot back before the SDK retries it, so a
// segment waiting out a backoff does not hold up the others' pages. The
// fake service answers the first Scan with a throttling error and records,
// when the retry arrives, how many slots are held (none should be: this is
// the only call). A wire-level fake: the emulator does not throttle.
func TestScanPageSlotGivenBackWhileTheSDKRetries_FakeService(t *testing.T) {
	slots := newPageSlots(1)
	var calls atomic.Int64
	heldAtRetry := int64(-1)
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if calls.Add(1) == 1 {
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`)
			return
		}
		heldAtRetry = int64(len(slots))
		fmt.Fprint(rw, `{"Items":[{"id":{"S":"a"}}],"Count":1,"ScannedCount":1}`)
	}))
	defer ts.Close()
	db := dynamodb.New(dynamodb.Options{Region: "eu-west-1", BaseEndpoint: aws.String(ts.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})})
	slot := &pageSlot{slots: slots}
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t")}, slot.option())
	require.NoError(t, err)
	assert.Len(t, out.Items, 1)
	assert.Equal(t, int64(2), calls.Load(), "throttled once, then answered")
	assert.Equal(t, int64(0), heldAtRetry, "no slot held while the SDK retried")
	assert.True(t, slot.held, "the answered page holds its slot until the diff has reduced it")
	slot.release()
	assert.Equal(t, 0, len(slots))
}
