// Package dlqcmd holds what the dlq commands that change a queue share: the
// flags naming the DLQ and the confirmation rule.
package dlqcmd

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/redrive"
)

// Target is the DLQ a command changes, and how the change was confirmed.
type Target struct {
	Queue   string
	Yes     bool
	Confirm []string
}

// AddFlags adds --queue, --yes and --confirm.
func (t *Target) AddFlags(fl *pflag.FlagSet) {
	fl.StringVarP(&t.Queue, "queue", "q", "", "URL of the DLQ")
	fl.BoolVar(&t.Yes, "yes", false, "do it (default: dry run)")
	factory.AddConfirmFlag(fl, &t.Confirm, "the name of a protected queue or function this run changes or invokes")
}

// Name is the queue's name, the last part of its URL.
func (t *Target) Name() string { return protect.QueueName(t.Queue) }

// Apply decides whether the change goes ahead (guard's Confirm): a dry run
// without --yes; the DLQ (its tags read with ListQueueTags) and every other
// target (e.g. the function a redrive invokes) are decided by the one
// protection rule, and each protected one needs its name typed (or --confirm).
// When it goes ahead, the run's `started` audit record is written first; when
// that fails, nothing goes ahead.
func (t *Target) Apply(ctx context.Context, f *factory.Factory, q protect.QueueAPI, more ...protect.Target) (*guard.Confirmed, error) {
	targets := append([]protect.Target{protect.ReadQueue(ctx, q, t.Queue)}, more...)
	decided, err := guard.Decide(f, targets...)
	if err != nil {
		return nil, err
	}
	g, err := decided.Confirm(t.Yes, t.Confirm)
	if err != nil || g.DryRun() {
		return g, err
	}
	names := make([]string, 0, len(g.Decisions()))
	for _, d := range g.Decisions() {
		names = append(names, d.Name)
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: names}); err != nil {
		return nil, err
	}
	return g, nil
}

// Waiting shows, on the run's progress, that it waits for messages in
// flight to come back (move and redrive).
func Waiting(bar *iostreams.Bar) func(d redrive.Depth, remaining int, waited, bound time.Duration) {
	return func(d redrive.Depth, remaining int, waited, bound time.Duration) {
		bar.Status("waiting for %d message(s) not taken yet to come back (%s; %s of at most %s)", remaining, d, waited.Round(time.Second), bound.Round(time.Second))
	}
}
