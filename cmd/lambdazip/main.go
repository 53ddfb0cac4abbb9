// Command lambdazip builds a Go Lambda function into a deployment zip
// (bootstrap for provided.al2023 on arm64): `make consumer-zip` runs
//
//	go run ./cmd/lambdazip -o bin/consumer.zip ./modules/stream-consumer/examples/go-consumer
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/dynops/dynops/internal/lambdazip"
)

func main() {
	out := flag.String("o", "", "zip to write (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lambdazip -o OUT.zip PACKAGE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := lambdazip.Build(context.Background(), flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "lambdazip:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}
