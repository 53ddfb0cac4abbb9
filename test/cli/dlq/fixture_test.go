// Package dlq tests `dynops dlq` on the target (the emulator by default) with
// real streams: items are written to a real table with a stream, the shard IDs
// and sequence numbers come from DescribeStream/GetRecords, on-failure records
// of the documented format go into a real SQS queue, and the example
// consumer's real handler runs behind a local Lambda Invoke endpoint
// (test/helpers/lambdaendpoint) that dynops reaches with --lambda-endpoint-url.
package dlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/onfailure"
	"github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer/handler"
	"github.com/dynops/dynops/test/helpers/esm"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// Function names served by the local endpoint.
const (
	consumerFn = "order-consumer"    // the example consumer's real handler
	crashingFn = "crashing-consumer" // a consumer whose handler returns an error (FunctionError: Unhandled)
)

// drill is one test's world: a source table with a stream, the consumer's
// processed table, a DLQ, and the local Lambda endpoint.
type drill struct {
	t         testing.TB
	ctx       context.Context
	db        *dynamodb.Client
	streams   *dynamodbstreams.Client
	sqs       *sqs.Client
	table     string
	processed string
	dlq       string
	shard     esm.Shard
	endpoint  *lambdaendpoint.Server
	consumer  *handler.Handler
	auditLog  string
}

func newDrill(t testing.TB) *drill {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	d := &drill{
		t: t, ctx: ctx,
		db: dynamodb.NewFromConfig(cfg), streams: dynamodbstreams.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg),
		table: "dev-" + id + "-order", processed: "dev-" + id + "-processed",
		auditLog: filepath.Join(t.TempDir(), "audit.jsonl"),
	}
	streamArn := fixture.Create(t, d.db, fixture.Table{Name: d.table, HashKey: "order_id", Stream: true})
	fixture.Create(t, d.db, fixture.Table{Name: d.processed, HashKey: "event_id"})
	q, err := d.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dev-" + id + "-order-dlq")})
	require.NoError(t, err)
	d.dlq = aws.ToString(q.QueueUrl)
	t.Cleanup(func() { _, _ = d.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &d.dlq}) })
	d.shard, err = esm.StreamShard(ctx, d.streams, streamArn)
	require.NoError(t, err)

	d.endpoint, err = lambdaendpoint.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.endpoint.Close() })
	d.consumer = &handler.Handler{DB: d.db, ProcessedTable: d.processed}
	d.endpoint.Register(consumerFn, func() lambda.Handler { return lambda.NewHandler(d.consumer.Handle) })
	d.endpoint.Register(crashingFn, func() lambda.Handler {
		return lambda.NewHandler(func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			return events.DynamoDBEventResponse{}, errors.New("consumer crashed: cannot reach its downstream")
		})
	})
	// The consumers are dev functions (env tag, as the modules write it): the
	// redrive guard reads it (docs/protection.md).
	d.endpoint.SetTags(consumerFn, map[string]string{"env": "dev"})
	d.endpoint.SetTags(crashingFn, map[string]string{"env": "dev"})
	return d
}

// put writes an order; poison marks it as a record the consumer refuses.
func (d *drill) put(orderID string, total int, poison bool) {
	d.t.Helper()
	_, err := d.db.PutItem(d.ctx, &dynamodb.PutItemInput{TableName: &d.table, Item: map[string]ddbtypes.AttributeValue{
		"order_id": &ddbtypes.AttributeValueMemberS{Value: orderID},
		"total":    &ddbtypes.AttributeValueMemberN{Value: strconv.Itoa(total)},
		"poison":   &ddbtypes.AttributeValueMemberBOOL{Value: poison},
	}})
	require.NoError(d.t, err)
}

func (d *drill) remove(orderID string) {
	d.t.Helper()
	_, err := d.db.DeleteItem(d.ctx, &dynamodb.DeleteItemInput{TableName: &d.table, Key: map[string]ddbtypes.AttributeValue{
		"order_id": &ddbtypes.AttributeValueMemberS{Value: orderID},
	}})
	require.NoError(d.t, err)
}

// records returns every record of the table's stream, as GetRecords gives them.
func (d *drill) records() []streamtypes.Record {
	d.t.Helper()
	recs, err := esm.ReadAll(d.ctx, d.streams, d.shard)
	require.NoError(d.t, err)
	return recs
}

// fail sends the on-failure record Lambda would write for recs to the DLQ.
func (d *drill) fail(recs []streamtypes.Record, edit func(*onfailure.Record)) {
	d.t.Helper()
	r := esm.OnFailure(d.shard, recs, esm.FunctionArn(target.Region, consumerFn), "", 3, time.Now())
	if edit != nil {
		edit(&r)
	}
	require.NoError(d.t, esm.Send(d.ctx, d.sqs, d.dlq, r))
}

// sendRaw puts a message that is not (or not only) an on-failure record.
func (d *drill) sendRaw(body string) {
	d.t.Helper()
	_, err := d.sqs.SendMessage(d.ctx, &sqs.SendMessageInput{QueueUrl: &d.dlq, MessageBody: &body})
	require.NoError(d.t, err)
}

// depth is the DLQ's visible and in-flight message counts.
func (d *drill) depth(queue string) (visible, inFlight int) {
	d.t.Helper()
	out, err := d.sqs.GetQueueAttributes(d.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &queue, AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	require.NoError(d.t, err)
	visible, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	inFlight, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, inFlight
}

// processedIDs are the event IDs the consumer recorded.
func (d *drill) processedIDs() map[string]bool {
	d.t.Helper()
	ids := map[string]bool{}
	p := dynamodb.NewScanPaginator(d.db, &dynamodb.ScanInput{TableName: &d.processed, ProjectionExpression: aws.String("event_id")})
	for p.HasMorePages() {
		page, err := p.NextPage(d.ctx)
		require.NoError(d.t, err)
		for _, it := range page.Items {
			ids[it["event_id"].(*ddbtypes.AttributeValueMemberS).Value] = true
		}
	}
	return ids
}

// dynops runs the CLI in-process with the drill's audit log; redrive goes to
// the local Lambda endpoint.
func (d *drill) dynops(args ...string) (string, string, int) {
	d.t.Helper()
	if len(args) > 1 && args[1] == "redrive" {
		args = append(args, "--lambda-endpoint-url", d.endpoint.URL)
	}
	return target.Dynops(d.t, d.auditLog, args...)
}

// invokedEvents decodes the events the consumer received, per invocation.
func (d *drill) invokedEvents(function string) []map[string]any {
	d.t.Helper()
	var evs []map[string]any
	for _, inv := range d.endpoint.Invocations() {
		if inv.Function != function {
			continue
		}
		var ev map[string]any
		require.NoError(d.t, json.Unmarshal(inv.Payload, &ev))
		evs = append(evs, ev)
	}
	return evs
}

// auditActions returns the actions of the audit log's records, by name.
func (d *drill) auditActions() map[string]int {
	d.t.Helper()
	recs, err := audit.Read(d.auditLog)
	require.NoError(d.t, err)
	n := map[string]int{}
	for _, r := range recs {
		for _, a := range r.Actions {
			n[a.What]++
		}
	}
	return n
}

func ids(recs []streamtypes.Record) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, aws.ToString(r.EventID))
	}
	return out
}

func jsonOut[T any](t *testing.T, stdout string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(stdout), &v), "stdout: %s", stdout)
	return v
}

func orderID(i int) string { return fmt.Sprintf("o-%04d", i) }
