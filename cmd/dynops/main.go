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
	"github.com/dynops/dynops/internal/pprofrun"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// Ctrl-C (or SIGTERM) cancels the context: the command stops its AWS
	// calls, removes its temporary files, says what state things are in and
	// exits 130. A second Ctrl-C kills the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	stopProfile := pprofrun.Start()
	code := root.Execute(ctx, factory.New(iostreams.System()), version, os.Args[1:])
	stop()
	stopProfile()
	os.Exit(code)
}
