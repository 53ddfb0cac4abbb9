// Command dynops operates guideline-compliant DynamoDB tables.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/iostreams"
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
	stopProfile := profile()
	code := root.Execute(ctx, factory.New(iostreams.System()), version, os.Args[1:])
	stop()
	stopProfile()
	os.Exit(code)
}

// profile starts a CPU profile when DYNOPS_CPUPROFILE names a file and, when
// DYNOPS_MEMPROFILE names one, writes a heap profile (in use at exit and
// allocated over the run) when the returned func is called: what `make
// bench` uses to say where a command's time and memory go.
func profile() func() {
	var stops []func()
	if p := os.Getenv("DYNOPS_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err != nil {
			fmt.Fprintf(os.Stderr, "dynops: DYNOPS_CPUPROFILE: %v\n", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "dynops: DYNOPS_CPUPROFILE: %v\n", err)
			f.Close()
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("DYNOPS_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 64 << 10
		stops = append(stops, func() {
			f, err := os.Create(p)
			if err != nil {
				fmt.Fprintf(os.Stderr, "dynops: DYNOPS_MEMPROFILE: %v\n", err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				fmt.Fprintf(os.Stderr, "dynops: DYNOPS_MEMPROFILE: %v\n", err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
