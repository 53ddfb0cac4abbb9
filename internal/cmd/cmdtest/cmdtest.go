// Package cmdtest runs a command's flag parsing and checks in tests: the
// command is built with a run function that records its options instead of
// calling AWS.
package cmdtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/iostreams"
)

// Parse builds the command with newCmd, runs it with args and returns the
// options its run function got (nil when the command refused to run) and
// the command's error.
func Parse[O any](t testing.TB, newCmd func(*factory.Factory, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	var got *O
	cmd := newCmd(factory.New(ios), func(_ context.Context, o *O) error { got = o; return nil })
	// Root checks every flag's declared range before any command runs.
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if err := flagcheck.Check(c.Flags()); err != nil {
			return factory.UsageErrorf("%w", err)
		}
		return nil
	}
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return got, err
}

// ExpectUsage checks one case of a command's own checks: wantErr "" means
// the command runs; otherwise it refuses with a usage error (exit 2) whose
// message holds wantErr, and nothing runs.
func ExpectUsage[O any](t testing.TB, newCmd func(*factory.Factory, func(context.Context, *O) error) *cobra.Command, wantErr string, args ...string) {
	t.Helper()
	got, err := Parse(t, newCmd, args...)
	ran := got != nil
	if wantErr == "" && (err != nil || !ran) || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr) || !factory.IsUsageError(err) || ran) {
		t.Errorf("%v: err %v, ran %v; want %q", args, err, ran, wantErr)
	}
}

// Case is one row of a command's flag table: the args after the table's
// common ones, and the usage error they must give ("": the command runs).
type Case struct {
	Args    []string
	WantErr string
}

// ExpectUsages runs ExpectUsage for each case, its args after base.
func ExpectUsages[O any](t testing.TB, newCmd func(*factory.Factory, func(context.Context, *O) error) *cobra.Command, base []string, cases []Case) {
	t.Helper()
	for _, c := range cases {
		ExpectUsage(t, newCmd, c.WantErr, append(slices.Clone(base), c.Args...)...)
	}
}

// AuditRun appends one finished run of command, tied to incident, to the
// audit log at path, and returns a setup for viewtest.Forms that points the run's
// Factory at that log (the audit commands' tests).
func AuditRun(t testing.TB, path, incident, command string) func(*factory.Factory) {
	t.Helper()
	r := audit.New(audit.Options{Path: path, Tags: audit.Tags{Incident: incident}})
	r.SkipCaller("a command test: no AWS")
	r.SetCommand(command, nil, []string{"prod-hoge-user"})
	if err := r.Finish(context.Background(), audit.Outcome{}); err != nil {
		t.Fatal(err)
	}
	return func(f *factory.Factory) { f.Audit = audit.NewRecorder(path, time.Now) }
}
