// Command dlq-drill sets up the DLQ drill of `make demo` on the emulator,
// where Lambda cannot run code (no Docker) and moto's event source mapping
// does not invoke functions:
//
//	dlq-drill serve --processed-table T --url-file F [--log F]
//	    serves the Lambda Invoke API on a loopback port with the example
//	    consumer's real handler (function "order-consumer"); ACCEPT_POISON=true
//	    is the fix, as in the deployed function's environment. Runs until SIGTERM.
//	dlq-drill write --table T --items N --poison M
//	    writes N orders and M poison ones into T.
//	dlq-drill poll --table T --dlq NAME --lambda-endpoint-url URL
//	    does what the event source mapping would: reads T's stream, invokes the
//	    function with each batch, retries, and sends the documented on-failure
//	    record of a batch that keeps failing to the DLQ (created if missing);
//	    prints the DLQ's URL.
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
	"github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer/handler"
	"github.com/dynops/dynops/test/helpers/esm"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

// Function is the drill consumer's name.
const Function = "order-consumer"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dlq-drill serve|write|poll [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{EndpointURL: os.Getenv("AWS_ENDPOINT_URL")})
	if err == nil {
		switch os.Args[1] {
		case "serve":
			err = serve(ctx, cfg, os.Args[2:])
		case "write":
			err = write(ctx, cfg, os.Args[2:])
		case "poll":
			err = poll(ctx, cfg, os.Args[2:])
		default:
			err = fmt.Errorf("unknown command %q: use serve, write or poll", os.Args[1])
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
	if err := ensureTable(ctx, db, *processed); err != nil {
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

func ensureTable(ctx context.Context, db *dynamodb.Client, name string) error {
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("event_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("event_id"), KeyType: types.KeyTypeHash}},
	})
	var exists *types.ResourceInUseException
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	return dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, time.Minute)
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

func poll(ctx context.Context, cfg aws.Config, args []string) error {
	fs := flag.NewFlagSet("poll", flag.ExitOnError)
	table := fs.String("table", "", "table whose stream is read")
	dlqName := fs.String("dlq", "", "DLQ name (created if missing)")
	endpoint := fs.String("lambda-endpoint-url", "", "the Lambda endpoint")
	batchSize := fs.Int("batch-size", 10, "BatchSize")
	retries := fs.Int("retries", 2, "MaximumRetryAttempts")
	_ = fs.Parse(args)
	db := dynamodb.NewFromConfig(cfg)
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: table})
	if err != nil {
		return fmt.Errorf("describing %s: %w", *table, err)
	}
	streams := dynamodbstreams.NewFromConfig(cfg)
	shard, err := esm.StreamShard(ctx, streams, aws.ToString(desc.Table.LatestStreamArn))
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
	fmt.Fprintf(os.Stderr, "dlq-drill: %d invocation(s), %d batch(es) processed, %d on-failure record(s) sent to %s\n",
		res.Invocations, res.Batches, res.Failed, m.DLQ)
	fmt.Println(m.DLQ)
	return nil
}
