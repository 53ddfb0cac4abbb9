// Package verify implements `dynops pitr verify`.
package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/repair"
)

// Options of `dynops pitr verify`.
type Options struct {
	Record  string
	Workers int
}

// NewCmdVerify returns `dynops pitr verify`. runF replaces the run function in tests of flag parsing.
func NewCmdVerify(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "verify --record FILE",
		Short: "Check that a repair kept its promise, key by key",
		Long: `Verify reads the original table's current item for every key of a repair's
record (` + "`dynops pitr repair --record FILE`" + `) and checks what the repair promised:
the keys it put back hold the restored value, the keys it deleted are gone, and
the keys it left alone (conflicts written after the damage window, good writes
out of its scope) were not reverted; items only in the original are still there.
Items the application wrote after the restore point are not findings: a table
that keeps taking good writes passes.
Exit status 0 when the promise holds, 1 when a key breaks it (every one listed).`,
		Example: `  dynops pitr verify --record keys.jsonl.repair.jsonl
  dynops pitr verify --record keys.jsonl.repair.jsonl -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Record == "" {
				return factory.UsageErrorf("pitr verify needs --record FILE, the record `dynops pitr repair` wrote (its output names it)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Record, "record", "", "the repair's record (pitr repair --record)")
	fl.IntVar(&opts.Workers, "workers", 8, "items read at once")
	flagcheck.Range(fl, "workers", "1", "256", "reads at once")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTimeout(cmd, time.Minute)
	cmdfacts.SetTargets(cmd, "record")
	return cmd
}

// Run verifies the record and prints what it found.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	if _, err := repair.ReadRecord(opts.Record, func(repair.KeyOutcome) error { return nil }); err != nil {
		return factory.UsageErrorf("--record: %w", err)
	}
	rep, err := repair.Verify(ctx, clients.DynamoDB(), opts.Record, opts.Workers)
	if err != nil {
		return err
	}
	f.Audit.Counts(map[string]int64{"keys": rep.Keys, "repaired": rep.Repaired, "deleted": rep.Deleted, "left_alone": rep.LeftAlone,
		"changed_since": rep.ChangedSince, "extra_kept": rep.ExtraKept, "broken": int64(len(rep.Broken))})
	if err := show(f, rep); err != nil {
		return err
	}
	if !rep.PromiseHolds {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// show shows the report: printReport, or the JSON document.
func show(f *factory.Factory, rep *repair.VerifyReport) error {
	return view.Results(f, func(r *repair.VerifyReport) error { printReport(f, r); return nil }).Show(rep)
}

// printReport is the human view: the counts per state, the broken keys and
// the first notes, then the verdict.
func printReport(f *factory.Factory, r *repair.VerifyReport) {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "Verified the repair of %s from %s: %d key(s) of %s\n", r.To, r.From, r.Keys, r.Record)
	_ = f.IOStreams.Table([]string{"STATE", "KEYS"}, [][]string{
		{"repaired (holds the restored value)", fmt.Sprint(r.Repaired)},
		{"deleted (gone)", fmt.Sprint(r.Deleted)},
		{"left alone, untouched", fmt.Sprint(r.LeftAlone)},
		{"left alone, changed since by the application", fmt.Sprint(r.ChangedSince)},
		{"only in the original, kept", fmt.Sprint(r.ExtraKept)},
		{"BROKEN", fmt.Sprint(len(r.Broken))},
	})
	for _, b := range r.Broken {
		fmt.Fprintf(out, "  broken %s (%s): %s\n", b.Key, b.Outcome, b.Why)
	}
	for i, n := range r.Notes {
		if i == 10 {
			fmt.Fprintf(out, "  ... and %d more note(s) (-o json lists them)\n", len(r.Notes)-10)
			break
		}
		fmt.Fprintf(out, "  note %s (%s): %s\n", n.Key, n.Outcome, n.Why)
	}
	if r.PromiseHolds {
		fmt.Fprintln(out, "The repair's promise holds.")
	} else {
		fmt.Fprintf(out, "%d key(s) do not hold what the repair promised: diff them again and decide per key.\n", len(r.Broken))
	}
}
