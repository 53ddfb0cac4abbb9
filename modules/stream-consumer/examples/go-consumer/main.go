// Command go-consumer is the example Lambda consumer of a table's stream.
// Environment: PROCESSED_TABLE (required), ACCEPT_POISON ("true" to accept
// poison records: the "fix" of the DLQ drill).
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer/handler"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatalf("loading AWS config: %v", err)
	}
	table := os.Getenv("PROCESSED_TABLE")
	if table == "" {
		log.Fatal("PROCESSED_TABLE is not set")
	}
	h := &handler.Handler{DB: dynamodb.NewFromConfig(cfg), ProcessedTable: table, AcceptPoison: os.Getenv("ACCEPT_POISON") == "true"}
	lambda.Start(h.Handle)
}
