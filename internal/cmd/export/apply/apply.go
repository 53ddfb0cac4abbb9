// Package apply implements `dynops export apply`: incremental exports applied
// in order onto a table rebuilt from a full export (DDB-EXP-01, DDB-DR-01).
package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/protect"
)

// Options of `dynops export apply`.
type Options struct {
	Bucket       string
	BucketRegion string
	Prefixes     []string
	Table        string
	Since        string
	Yes          bool
	Confirm      []string
	// Budgets holds --max-write-units, the write budget on Table.
	budget.Budgets
	// PriceFile holds on-demand prices for the estimate.
	PriceFile string
	// SourceTable is the ARN of the table the exports are of ("": the
	// table of the full export Table was imported from).
	SourceTable string
	// Unverified is the --unverified-exports reason ("": none).
	Unverified string
	// Plan is --plan-out FILE: a dry run's per-key before/after images.
	Plan shared.PlanOut
}

// NewCmdApply returns `dynops export apply`. runF replaces Run in tests of flag parsing.
func NewCmdApply(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "apply --bucket B --prefix P [--prefix P2 ...] --table T [--since TIME] [--yes]",
		Short: "Apply incremental exports, in order and gap-checked, onto a table imported from a full export",
		Long: `Apply rebuilds a table as of the end of the last incremental export: full
export (dynops export import) + incremental exports = the source table at
that time, e.g. in another region (DDB-EXP-01, DDB-DR-01).

The exports under each --prefix (matched by path segment) are ordered by
window; each must start where the previous one ended, and the first where
the table's history ends: its dynops:applied-through tag (set by apply), else
the exportTime of the full export it was imported from (its
dynops:imported-from tag), else --since. A gap or an overlap is refused.
Each export is verified first (the code of 'dynops export verify') and
refused on any finding. Within an export each key takes its latest change by
WriteTimestampMicros: a NewImage is put whole, a change without one (a
delete) deletes the key.

Only exports DynamoDB vouches for are read (as 'dynops export revert'): each
must be an export of the source table (--source-table ARN, else the table
of the full export the table was imported from, itself vouched for), in
--bucket under its own s3Prefix; DescribeExport must say COMPLETED and agree
with its manifest; no data file may have been written after the export
ended. Exports DynamoDB cannot answer for (another account; the emulator)
need --unverified-exports "REASON": printed, audited, refused on a protected
table unless run as the break-glass role. A refusal exits 2, nothing written.

Resumable and idempotent: after each export the table's
dynops:applied-through tag moves to the window's end (read back); a re-run
skips what is applied and applies an interrupted export again whole.

It writes to the table: without --yes it prints the plan and changes
nothing; a prod-* table also needs its name typed (or --confirm NAME).`,
		Example: `  dynops export apply --bucket prod-hoge-exports --bucket-region eu-west-1 \
      --prefix scheduled/prod-hoge-user/incremental --table prod-hoge-user --region eu-central-1 --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Bucket == "" || opts.Table == "" || len(opts.Prefixes) == 0 {
				return factory.UsageErrorf("export apply needs --bucket BUCKET, --prefix PREFIX (repeatable) and --table TABLE")
			}
			if err := shared.CheckExportFlags(cmd, opts.Prefixes, opts.Unverified); err != nil {
				return err
			}
			if opts.SourceTable != "" {
				if err := export.CheckTableArn(opts.SourceTable); err != nil {
					return factory.UsageErrorf("--source-table: %w", err)
				}
			}
			if opts.Since != "" {
				if _, err := time.Parse(time.RFC3339Nano, opts.Since); err != nil {
					return factory.UsageErrorf("--since %q: give an RFC 3339 time, e.g. 2026-03-01T00:00:00Z (the full export's exportTime)", opts.Since)
				}
			}
			if err := opts.Plan.Check(opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Bucket, "bucket", "", "bucket holding the exports")
	fl.StringVar(&opts.BucketRegion, "bucket-region", "", "region of the bucket (default: --region)")
	flagcheck.Region(fl, "bucket-region")
	fl.StringArrayVar(&opts.Prefixes, "prefix", nil, "prefix of incremental export(s) (repeatable)")
	fl.StringVar(&opts.Table, "table", "", "the table imported from the full export")
	fl.StringVar(&opts.Since, "since", "", "where the first window must start, when the table has no dynops tag saying so (RFC 3339)")
	opts.Budgets.AddFlags(fl, "", "--table")
	budget.AddPriceFlag(fl, &opts.PriceFile)
	fl.StringVar(&opts.SourceTable, "source-table", "", "ARN of the table the exports are of (default: the table of the full export --table was imported from)")
	shared.AddUnverifiedFlag(fl, &opts.Unverified)
	shared.AddPlanOutFlags(fl, &opts.Plan)
	fl.BoolVar(&opts.Yes, "yes", false, "do it (default: a dry run that prints the plan)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the table name of a prod apply")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "exports applied so far stay applied and the table's dynops:applied-through tag says up to where (the audit log lists what was done); run the same apply again: it skips what is applied and applies the interrupted export again whole")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "bucket")
	return cmd
}

// Run plans the apply; with --yes (and the prod confirmation) it applies.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	store := shared.BucketStore(clients, opts.Bucket, opts.BucketRegion)
	db := clients.DynamoDB()
	var since time.Time
	if opts.Since != "" {
		since, _ = time.Parse(time.RFC3339Nano, opts.Since)
	}
	// The table's protection comes first, from its tags read from the
	// service (unreadable tags leave it protected): a protected table
	// without its typed name is refused before any export or tag is read.
	decided, err := guard.Decide(f, protect.ReadTable(ctx, db, opts.Table))
	if err != nil {
		return err
	}
	g, err := decided.Confirm(opts.Yes, opts.Confirm)
	if err != nil {
		return err
	}
	// Unverified exports are read in a dry run (it writes nothing); a run
	// that writes takes them on a protected table only as the break-glass role.
	if opts.Unverified != "" && !g.DryRun() {
		if err := decided.AllowException(ctx, "--"+shared.UnverifiedFlag); err != nil {
			return err
		}
	}
	ok := !g.DryRun()
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	incs, err := export.FindIncrements(ctx, store, opts.Prefixes)
	if err != nil {
		return err
	}
	// Whom to believe, before anything is written or the audit started: the
	// source table, and every export of the chain vouched for against it.
	trust := shared.Trust(clients, opts.Unverified)
	source, full, err := export.SourceOfApply(ctx, db, store, opts.Bucket, opts.Table, opts.SourceTable, trust)
	switch {
	case errors.Is(err, export.ErrNoSource):
		return factory.UsageErrorf("%w", err)
	case err != nil:
		return shared.Refusal(err)
	}
	vouched, err := export.Vouch(ctx, store, incs, exportverify.Expect{TableArn: source, Bucket: opts.Bucket}, trust)
	if err != nil {
		return shared.Refusal(err)
	}
	if full != nil {
		vouched = append([]exportverify.Vouched{*full}, vouched...)
	}
	arns := shared.ExportArns(vouched)
	arn, base, baseFrom, err := export.Baseline(ctx, db, store, opts.Bucket, opts.Table, since)
	if err != nil {
		return err
	}
	wb, err := opts.Budgets.Resolve(ctx, db, capacity.Write, opts.Table)
	if err != nil {
		return err
	}
	bucket := wb.Bucket
	if !ok {
		f.Audit.Act(audit.ActPlanExportApply, opts.Table, map[string]any{"bucket": opts.Bucket, "prefixes": opts.Prefixes, "since": base, "write_budget": wb,
			"source_table": source, "export_arns": arns, "unverified_exports": opts.Unverified})
	} else if _, err := g.StartAudit(ctx, audit.Plan{Targets: append([]string{opts.Table, "s3://" + opts.Bucket, source}, arns...),
		Counts: map[string]int64{"exports_to_apply": int64(len(incs))}}); err != nil {
		return err
	}
	rep, err := export.ApplyIncrements(ctx, db, store, arn, base, incs, export.ApplyOptions{
		Table: opts.Table, Apply: ok, Act: f.Audit.Act, WriteBudget: bucket, Planned: opts.Plan.Planned(),
		Current: export.Current(db, opts.Table),
		Progress: func(inc export.Increment, done, total int) {
			if bucket == nil {
				f.IOStreams.Progress("applying %s: %d/%d changes", inc.Dir, done, total)
				return
			}
			u := bucket.Usage()
			f.IOStreams.Progress("applying %s: %d/%d changes, %.1f WCU/s of %.1f", inc.Dir, done, total, u.PerSecond, u.Budget)
		},
	})
	if bucket != nil && ok {
		u := bucket.Usage()
		rep.WriteCapacity = &u
		f.Audit.Act(audit.ActExportApply, opts.Table, map[string]any{"write_capacity": u, "write_budget": wb})
	}
	f.IOStreams.Done()
	rep.WriteBudget = &wb
	rep.SinceFrom = baseFrom
	rep.SourceTable, rep.Vouched, rep.Unverified = source, vouched, opts.Unverified
	if !ok && err == nil {
		// The estimate: each put a whole item of the table's average size,
		// each delete one unit, over the exports not yet applied.
		var puts, deletes int64
		for _, r := range rep.Increments {
			if !r.Skipped {
				puts, deletes = puts+int64(r.Puts), deletes+int64(r.Deletes)
			}
		}
		rep.WriteEstimate = capacity.ItemWrites(ctx, db, opts.Table, puts, deletes, wb, prices, clients.Region())
	}
	if err != nil {
		_ = print(f, rep)
		return err
	}
	if err := print(f, rep); err != nil || !g.DryRun() {
		return err
	}
	if err := opts.Plan.Finish(f); err != nil {
		return err
	}
	g.PrintDryRun("apply them")
	return nil
}

func print(f *factory.Factory, rep export.ApplyReport) error {
	if f.JSON() {
		return f.PrintResult(rep)
	}
	out := f.IOStreams.Out
	if rep.DryRun {
		fmt.Fprintln(out, guard.DryRunHeader(fmt.Sprintf("apply onto %s, from %s (%s):", rep.Table, rep.Since.Format(time.RFC3339Nano), rep.SinceFrom)))
	} else {
		fmt.Fprintf(out, "applied onto %s, from %s (%s):\n", rep.Table, rep.Since.Format(time.RFC3339Nano), rep.SinceFrom)
	}
	shared.PrintVouched(out, rep.SourceTable, rep.Vouched, rep.Unverified)
	for _, r := range rep.Increments {
		state := fmt.Sprintf("%d puts, %d deletes", r.Puts, r.Deletes)
		if r.Skipped {
			state = "already applied: skipped"
		}
		fmt.Fprintf(out, "  %s..%s  %s  %s\n", r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Dir, state)
	}
	if b := rep.WriteBudget; b != nil {
		fmt.Fprintln(out, b.String())
	}
	if e := rep.WriteEstimate; e != nil {
		fmt.Fprintln(out, e.String())
	}
	if c := rep.WriteCapacity; c != nil {
		fmt.Fprintf(out, "write capacity: %.1f units used, %.1f units/s on average, budget %.1f units/s (as DynamoDB reported)\n", c.Used, c.PerSecond, c.Budget)
	}
	if !rep.DryRun {
		fmt.Fprintf(out, "%s is applied through %s (its %s tag, read back)\n", rep.Table, rep.Through.Format(time.RFC3339Nano), export.TagAppliedThrough)
	}
	return nil
}
