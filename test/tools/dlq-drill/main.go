// Command dlq-drill sets up the DLQ drill of `make demo` on the emulator,
// where Lambda cannot run code (no Docker) and moto's event source mapping
// does not invoke functions:
//
//	dlq-drill serve --processed-table T --url-file F [--log F]
//	    serves the Lambda Invoke API on a loopback port with the example
//	    consumer's real handler (function "order-consumer"); ACCEPT_POISON=true
//	    is the fix, as in the deployed function's environment. Runs until SIGTERM.
//	dlq-drill table --name T
//	    creates T (hash key user_id) with a NEW_AND_OLD_IMAGES stream and no
//	    event source mapping, if missing: moto empties the stream of a table
//	    that has a mapping on every write (it tries to run the function and
//	    cannot without Docker), so the drill cannot read an envs/local table's.
//	dlq-drill write --table T --items N --poison M
//	    writes N orders and M poison ones into T.
//	dlq-drill poll --table T --dlq NAME --lambda-endpoint-url URL [--records N --wait D --expect-failed F]
//	    does what the event source mapping would: waits (up to D) until T's
//	    stream holds the N records written, reads it, invokes the function
//	    with each batch, retries, and sends the documented on-failure record
//	    of a batch that keeps failing to the DLQ (created if missing); prints
//	    the DLQ's URL. It fails when the stream never holds the records, when
//	    nothing was invoked, or when it sent other than F on-failure records:
//	    a drill that did nothing must not pass.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer/handler"
	"github.com/dynops/dynops/test/helpers/esm"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

// Function is the drill consumer's name.
const Function = "order-consumer"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dlq-drill serve|table|write|poll [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{EndpointURL: os.Getenv("AWS_ENDPOINT_URL")})
	if err == nil {
		switch os.Args[1] {
		case "serve":
			err = serve(ctx, cfg, os.Args[2:])
		case "table":
			err = table(ctx, cfg, os.Args[2:])
		case "write":
			err = write(ctx, cfg, os.Args[2:])
		case "poll":
			err = pollStream(ctx, cfg, os.Args[2:])
		default:
			err = fmt.Errorf("unknown command %q: use serve, table, write or poll", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dlq-drill:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, cfg aws.Config, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	processed := fs.String("processed-table", "", "the consumer's processed-events table (created if missing)")
	urlFile := fs.String("url-file", "", "write the endpoint URL here once serving")
	logFile := fs.String("log", "", "append each invocation here, as JSON lines")
	_ = fs.Parse(args)
	if *processed == "" || *urlFile == "" {
		return fmt.Errorf("serve needs --processed-table and --url-file")
	}
	db := dynamodb.NewFromConfig(cfg)
	if err := ensureTable(ctx, db, *processed, "event_id", nil); err != nil {
		return err
	}
	srv, err := lambdaendpoint.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	h := &handler.Handler{DB: db, ProcessedTable: *processed, AcceptPoison: os.Getenv("ACCEPT_POISON") == "true"}
	srv.Register(Function, func() lambda.Handler { return lambda.NewHandler(h.Handle) })
	srv.SetTags(Function, map[string]string{"env": "dev"}) // a dev consumer, as the modules tag it
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		srv.OnInvoke(func(inv lambdaendpoint.Invocation) { _ = enc.Encode(inv) })
	}
	if err := os.WriteFile(*urlFile, []byte(srv.URL), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dlq-drill: function %s (accept poison: %t) at %s\n", Function, h.AcceptPoison, srv.URL)
	<-ctx.Done()
	return nil
}

// ensureTable creates name (PAY_PER_REQUEST, hash key hashKey, the stream
// given) if it is missing, and waits until it is active.
func ensureTable(ctx context.Context, db *dynamodb.Client, name, hashKey string, stream *types.StreamSpecification) error {
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &hashKey, AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: &hashKey, KeyType: types.KeyTypeHash}},
		StreamSpecification:  stream,
	})
	var exists *types.ResourceInUseException
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	return dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, time.Minute)
}

func table(ctx context.Context, cfg aws.Config, args []string) error {
	fs := flag.NewFlagSet("table", flag.ExitOnError)
	name := fs.String("name", "", "the drill's table (hash key user_id, NEW_AND_OLD_IMAGES stream)")
	_ = fs.Parse(args)
	if *name == "" {
		return fmt.Errorf("table needs --name")
	}
	err := ensureTable(ctx, dynamodb.NewFromConfig(cfg), *name, "user_id",
		&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages})
	if err != nil {
		return err
	}
	fmt.Printf("table %s: stream NEW_AND_OLD_IMAGES, no event source mapping\n", *name)
	return nil
}

func write(ctx context.Context, cfg aws.Config, args []string) error {
	fs := flag.NewFlagSet("write", flag.ExitOnError)
	table := fs.String("table", "", "table to write to (hash key user_id)")
	items := fs.Int("items", 3, "ordinary items")
	poison := fs.Int("poison", 1, "poison items (poison = true)")
	_ = fs.Parse(args)
	db := dynamodb.NewFromConfig(cfg)
	for i := range *items + *poison {
		isPoison := i >= *items
		id := "u-drill-" + strconv.Itoa(i)
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: map[string]types.AttributeValue{
			"user_id": &types.AttributeValueMemberS{Value: id},
			"email":   &types.AttributeValueMemberS{Value: id + "@example.com"},
			"poison":  &types.AttributeValueMemberBOOL{Value: isPoison},
		}}); err != nil {
			return fmt.Errorf("writing %s to %s: %w", id, *table, err)
		}
		fmt.Printf("put %s (poison: %t)\n", id, isPoison)
	}
	return nil
}

func pollStream(ctx context.Context, cfg aws.Config, args []string) error {
	fs := flag.NewFlagSet("poll", flag.ExitOnError)
	table := fs.String("table", "", "table whose stream is read")
	dlqName := fs.String("dlq", "", "DLQ name (created if missing)")
	endpoint := fs.String("lambda-endpoint-url", "", "the Lambda endpoint")
	batchSize := fs.Int("batch-size", 10, "BatchSize")
	retries := fs.Int("retries", 2, "MaximumRetryAttempts")
	records := fs.Int("records", 1, "records the stream must hold before the drill reads it (the items written)")
	wait := fs.Duration("wait", time.Minute, "how long to wait for them")
	expectFailed := fs.Int("expect-failed", -1, "on-failure records the drill must send (-1: any number)")
	_ = fs.Parse(args)
	db := dynamodb.NewFromConfig(cfg)
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: table})
	if err != nil {
		return fmt.Errorf("describing %s: %w", *table, err)
	}
	streamArn := aws.ToString(desc.Table.LatestStreamArn)
	if streamArn == "" {
		return fmt.Errorf("table %s has no stream: the drill needs one (dlq-drill table --name %s creates a table with one)", *table, *table)
	}
	streams := dynamodbstreams.NewFromConfig(cfg)
	shard, err := esm.StreamShard(ctx, streams, streamArn)
	if err != nil {
		return err
	}
	recs, err := esm.WaitForRecords(ctx, streams, shard, *records, *wait)
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("the stream of %s holds %d of the %d record(s) written, after waiting %s (--wait): the drill would deliver nothing%s",
			*table, len(recs), *records, *wait, mappingNote(ctx, cfg, streamArn))
	}
	if err != nil {
		return err
	}
	sq := sqs.NewFromConfig(cfg)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: dlqName})
	if err != nil {
		return fmt.Errorf("creating queue %s: %w", *dlqName, err)
	}
	m := esm.Mapping{
		Streams: streams, SQS: sq, Shard: shard, DLQ: aws.ToString(q.QueueUrl),
		Lambda:      awslambda.NewFromConfig(cfg, func(o *awslambda.Options) { o.BaseEndpoint = endpoint }),
		FunctionArn: esm.FunctionArn(cfg.Region, Function), BatchSize: *batchSize, RetryAttempts: *retries,
	}
	res, err := m.Poll(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dlq-drill: %d record(s) read, %d invocation(s), %d batch(es) processed, %d on-failure record(s) sent to %s\n",
		len(recs), res.Invocations, res.Batches, res.Failed, m.DLQ)
	if res.Invocations == 0 {
		return fmt.Errorf("nothing was invoked: the drill did nothing")
	}
	if *expectFailed >= 0 && res.Failed != *expectFailed {
		return fmt.Errorf("%d on-failure record(s) sent to %s, the drill expects %d (--expect-failed)", res.Failed, m.DLQ, *expectFailed)
	}
	fmt.Println(m.DLQ)
	return nil
}

// mappingNote names the event source mappings on streamArn, which on moto
// take the stream's records away on every write; "" when there are none.
func mappingNote(ctx context.Context, cfg aws.Config, streamArn string) string {
	out, err := awslambda.NewFromConfig(cfg).ListEventSourceMappings(ctx, &awslambda.ListEventSourceMappingsInput{EventSourceArn: &streamArn})
	if err != nil {
		return fmt.Sprintf(" (listing the stream's event source mappings failed: %v)", err)
	}
	if len(out.EventSourceMappings) == 0 {
		return ""
	}
	var fns []string
	for _, m := range out.EventSourceMappings {
		fns = append(fns, aws.ToString(m.FunctionArn))
	}
	return fmt.Sprintf("; the stream has event source mapping(s) to %s, and moto empties such a stream on every write"+
		" (it tries to run the function, cannot without Docker, and drops the records): drill on a table without one (dlq-drill table)", strings.Join(fns, ", "))
}
