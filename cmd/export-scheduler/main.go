// Command export-scheduler is the Lambda behind modules/dynamodb-export's
// scheduled exports: EventBridge Scheduler invokes it per table with
// {"table": T, "bucket": B, "prefix": P}; each invocation takes one step of
// the table's gap-free series (internal/export.Series, the same code as
// `dynops export incremental --since-checkpoint`) and publishes the metrics
// the module alarms on. Environment: CHECKPOINT_TABLE.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/export"
)

// Event is the schedule's input.
type Event struct {
	Table  string `json:"table"`
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix"`
}

type handler struct {
	db              *dynamodb.Client
	cw              *cloudwatch.Client
	checkpointTable string
}

func (h handler) handle(ctx context.Context, ev Event) (export.Outcome, error) {
	if ev.Table == "" || ev.Bucket == "" {
		return export.Outcome{}, errors.New(`event needs "table" and "bucket"`)
	}
	s := export.Series{DB: h.db, Checkpoints: export.CheckpointStore{DB: h.db, Table: h.checkpointTable},
		Table: ev.Table, Target: export.Target{Bucket: ev.Bucket, Prefix: ev.Prefix}, Now: time.Now}
	out, err := s.Step(ctx)
	for _, d := range out.Decisions {
		log.Printf("%s: %s: %s", ev.Table, d.Action, d.Reason)
	}
	if perr := export.PublishMetrics(ctx, h.cw, out, err, time.Now()); perr != nil {
		err = errors.Join(err, perr)
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w", ev.Table, err)
	}
	return out, nil
}

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatalf("loading AWS config: %v", err)
	}
	table := os.Getenv("CHECKPOINT_TABLE")
	if table == "" {
		log.Fatal("CHECKPOINT_TABLE is not set")
	}
	clients := awsclients.New(cfg)
	h := handler{db: clients.DynamoDB(), cw: clients.CloudWatch(), checkpointTable: table}
	lambda.Start(h.handle)
}
