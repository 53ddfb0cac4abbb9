package throttle_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/throttle"
)

const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/orders"

// throttler is an http.RoundTripper that answers the first n requests with
// DynamoDB's throttling exception JSON carrying reason and resource (the
// wire shape of the API reference: ThrottlingReasons [{reason, resource}],
// throttlingReasons on ThrottlingException) and the rest with an empty
// GetItem result. The emulator cannot throttle by reason: this fake stands
// in front of the SDK's own deserializer and retryer instead.
type throttler struct {
	mu       sync.Mutex
	n, calls int
	code     string
	reasons  []throttle.Reason
}

func (t *throttler) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.calls++
	throttled := t.calls <= t.n
	t.mu.Unlock()
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"}}
	if !throttled {
		return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
	}
	field := "ThrottlingReasons"
	if t.code == "ThrottlingException" {
		field = "throttlingReasons"
	}
	var list []string
	for _, x := range t.reasons {
		list = append(list, fmt.Sprintf(`{"reason":%q,"resource":%q}`, x.Reason, x.Resource))
	}
	body := fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"throttled","%s":[%s]}`, t.code, field, strings.Join(list, ","))
	if t.reasons == nil {
		body = fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"throttled"}`, t.code)
	}
	return &http.Response{StatusCode: 400, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// client is a real SDK client (dynops's retry policy, the recorder's
// middleware) over the fake transport.
func client(rt http.RoundTripper, rec *throttle.Recorder, attempts int) *dynamodb.Client {
	cfg := aws.Config{Region: "eu-west-1", Credentials: aws.AnonymousCredentials{},
		HTTPClient: &http.Client{Transport: rt}, Retryer: func() aws.Retryer { return awsconfig.Retryer(attempts) },
		BaseEndpoint: aws.String("http://127.0.0.1:1")}
	return awsclients.New(cfg).CountingThrottles(rec).DynamoDB()
}

func get(ctx context.Context, db *dynamodb.Client) error {
	_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("orders"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "u1"}}})
	return err
}

// Every reason family, through each exception the SDK knows, read by the
// SDK's deserializer and classified with its fix (emulator cannot throttle
// by reason: a fake transport).
func TestEachReasonExplained_FakeTransportEmulatorCannotThrottleByReason(t *testing.T) {
	cases := []struct {
		code, reason, resource string
		cause                  throttle.Cause
		advice                 []string
	}{
		{"ProvisionedThroughputExceededException", "TableReadKeyRangeThroughputExceeded", arn, throttle.HotKey,
			[]string{"hot key", "table orders", "THROTTLED_KEYS", `{"pk":{"S":"u1"}}`, "runbooks/throttling.md#hot-key"}},
		{"ThrottlingException", "IndexWriteKeyRangeThroughputExceeded", arn + "/index/by-user", throttle.HotKey,
			[]string{"hot key", "index by-user of table orders", "--index-name by-user", "writes"}},
		{"ThrottlingException", "TableWriteMaxOnDemandThroughputExceeded", arn, throttle.OnDemandMax,
			[]string{"on-demand maximum of table orders", "MaxWriteRequestUnits", "on_demand_throughput.max_write_request_units"}},
		{"ProvisionedThroughputExceededException", "IndexReadMaxOnDemandThroughputExceeded", arn + "/index/gsi1", throttle.OnDemandMax,
			[]string{"index gsi1 of table orders", "MaxReadRequestUnits"}},
		{"RequestLimitExceeded", "TableReadAccountLimitExceeded", arn, throttle.Account,
			[]string{"Service Quotas", "Table-level read throughput limit"}},
		{"RequestLimitExceeded", "IndexWriteAccountLimitExceeded", arn + "/index/gsi1", throttle.Account,
			[]string{"Service Quotas", "write"}},
		{"ProvisionedThroughputExceededException", "TableWriteProvisionedThroughputExceeded", arn, throttle.Provisioned,
			[]string{"provisioned write capacity", "auto scaling"}},
		{"ThrottlingException", "TableReadSomethingNewExceeded", arn, throttle.Other, []string{"does not know"}},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			rt := &throttler{n: 100, code: c.code, reasons: []throttle.Reason{{Reason: c.reason, Resource: c.resource}}}
			rec := throttle.NewRecorder(nil)
			err := get(context.Background(), client(rt, rec, 2))
			require.Error(t, err)
			rs, ok := throttle.Reasons(err)
			require.True(t, ok, "%v is a throttling exception", err)
			require.Equal(t, []throttle.Reason{{Reason: c.reason, Resource: c.resource}}, rs)
			e := throttle.Explain(rs[0], `{"pk":{"S":"u1"}}`)
			assert.Equal(t, c.cause, e.Cause)
			msg := throttle.WithKey(err, `{"pk":{"S":"u1"}}`).Error()
			for _, want := range c.advice {
				assert.Contains(t, msg, want)
			}
			assert.Contains(t, msg, c.reason)
			assert.Equal(t, map[string]int64{c.reason: 2}, rec.Counts(), "both attempts counted")
		})
	}
}

// The throttles the SDK retries away never reach the command: the
// middleware counts them anyway, per reason, and says each reason once.
func TestRetriedThrottlesCountedPerReason_FakeTransportEmulatorCannotThrottleByReason(t *testing.T) {
	rt := &throttler{n: 3, code: "ThrottlingException", reasons: []throttle.Reason{
		{Reason: "TableWriteKeyRangeThroughputExceeded", Resource: arn},
		{Reason: "IndexWriteKeyRangeThroughputExceeded", Resource: arn + "/index/gsi1"}}}
	var first []string
	rec := throttle.NewRecorder(func(e throttle.Explanation) { first = append(first, e.Reason.Reason) })
	require.NoError(t, get(context.Background(), client(rt, rec, 10)))
	assert.Equal(t, map[string]int64{"TableWriteKeyRangeThroughputExceeded": 3, "IndexWriteKeyRangeThroughputExceeded": 3}, rec.Counts())
	assert.Equal(t, []string{"TableWriteKeyRangeThroughputExceeded", "IndexWriteKeyRangeThroughputExceeded"}, first)
	assert.Equal(t, map[string]int64{"throttled.TableWriteKeyRangeThroughputExceeded": 3, "throttled.IndexWriteKeyRangeThroughputExceeded": 3}, rec.AuditCounts())
	sum := rec.Summary()
	require.Len(t, sum, 2)
	assert.True(t, strings.HasPrefix(sum[0], "3 x TableWriteKeyRangeThroughputExceeded on table orders: hot key"), sum[0])
	assert.Contains(t, sum[1], "index gsi1 of table orders")
}

// An exception without reasons (older endpoints, the emulator) is still a
// throttle: counted as Unspecified, pointed at the metrics.
func TestThrottleWithoutReasons(t *testing.T) {
	rt := &throttler{n: 1, code: "ProvisionedThroughputExceededException"}
	rec := throttle.NewRecorder(nil)
	require.NoError(t, get(context.Background(), client(rt, rec, 3)))
	assert.Equal(t, map[string]int64{throttle.NoReason: 1}, rec.Counts())
	assert.Contains(t, rec.Summary()[0], "no reason")
}

// Other errors are not throttles; a nil recorder is inert.
func TestNotAThrottle(t *testing.T) {
	_, ok := throttle.Reasons(fmt.Errorf("wrapped: %w", &types.ResourceNotFoundException{}))
	assert.False(t, ok)
	assert.Equal(t, "", throttle.Describe(io.EOF, ""))
	err := io.EOF
	assert.Same(t, err, throttle.WithKey(err, "k"))
	var nilRec *throttle.Recorder
	nilRec.Observe(&types.ThrottlingException{})
	assert.Nil(t, nilRec.Counts())
	assert.Nil(t, nilRec.Summary())
}

// A keyed error is explained once: root adds nothing to it.
func TestUnexplained(t *testing.T) {
	err := &types.ThrottlingException{ThrottlingReasons: []types.ThrottlingReason{{Reason: aws.String("TableReadAccountLimitExceeded"), Resource: aws.String(arn)}}}
	assert.Contains(t, throttle.Unexplained(fmt.Errorf("x: %w", err)), "Service Quotas")
	assert.Equal(t, "", throttle.Unexplained(fmt.Errorf("x: %w", throttle.WithKey(err, "k"))))
}
