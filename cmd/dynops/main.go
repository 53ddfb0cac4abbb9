// Command dynops operates guideline-compliant DynamoDB tables.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/iostreams"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := root.Execute(ctx, factory.New(iostreams.System()), version, os.Args[1:])
	stop()
	os.Exit(code)
}
