// Package dlqcmd holds what the dlq commands that change a queue share: the
// flags naming the DLQ and the confirmation rule.
package dlqcmd

import (
	"context"
	"path"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/guideline"
)

// Target is the DLQ a command changes, and how the change was confirmed.
type Target struct {
	Queue   string
	Yes     bool
	Confirm string
}

// AddFlags adds --queue, --yes and --confirm.
func (t *Target) AddFlags(fl *pflag.FlagSet) {
	fl.StringVarP(&t.Queue, "queue", "q", "", "URL of the DLQ")
	fl.BoolVar(&t.Yes, "yes", false, "do it (default: dry run)")
	fl.StringVar(&t.Confirm, "confirm", "", "the DLQ's name, to confirm a prod-* queue without a terminal")
}

// Name is the queue's name, the last part of its URL.
func (t *Target) Name() string { return path.Base(strings.TrimRight(t.Queue, "/")) }

// Apply decides whether the change goes ahead: a dry run without --yes; a
// queue named prod-* also needs its name typed (or --confirm NAME). When it
// goes ahead, the run's `started` audit record is written first; when that
// fails, nothing goes ahead.
func (t *Target) Apply(ctx context.Context, f *factory.Factory, targets ...string) (bool, error) {
	ok, err := f.Confirm(factory.Confirmation{Yes: t.Yes, Env: guideline.EnvOf(t.Name()), Target: t.Name(), Typed: t.Confirm})
	if err != nil || !ok {
		return ok, err
	}
	if err := f.Audit.Start(ctx, audit.Plan{Targets: append([]string{t.Queue}, targets...)}); err != nil {
		return false, err
	}
	return true, nil
}
