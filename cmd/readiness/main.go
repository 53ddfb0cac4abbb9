// Command readiness is the Lambda behind modules/dynamodb-readiness:
// EventBridge Scheduler invokes it with {"env": E, "restore_table": T}
// (either may come from READINESS_ENV / READINESS_RESTORE_TABLE instead);
// each run checks env E against the guideline (the code of
// `dynops check --env`), restores T's latest restorable point in time to a
// throwaway table, verifies and deletes it, runs `dynops dr status` for the
// env's global tables, and publishes the metrics the module alarms on
// (internal/readiness).
package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/readiness"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatalf("loading AWS config: %v", err)
	}
	age := readiness.DefaultLeftoverAge
	if v := os.Getenv("READINESS_LEFTOVER_AGE"); v != "" {
		if age, err = time.ParseDuration(v); err != nil {
			log.Fatalf("READINESS_LEFTOVER_AGE=%q: %v (e.g. 30m)", v, err)
		}
	}
	h := readiness.Handler{Clients: readiness.NewClients(awsclients.New(cfg)), Env: os.Getenv("READINESS_ENV"),
		RestoreTable: os.Getenv("READINESS_RESTORE_TABLE"), LeftoverAge: age}
	lambda.Start(h.Handle)
}
