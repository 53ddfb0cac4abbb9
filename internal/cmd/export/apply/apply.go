// Package apply implements `dynops export apply`: incremental exports applied
// in order onto a table rebuilt from a full export (DDB-EXP-01, DDB-DR-01).
package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/export"
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
	// Shard is --shard I/N: apply only the keys of that shard ("": all).
	Shard string
	shard engine.Shard
	since time.Time
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

Resumable and idempotent: each key is read and written only when it is not
already as the export leaves it, on condition that it is unchanged since
read; after each export the table's dynops:applied-through tag moves to the
window's end (read back). A re-run skips what is applied and applies an
interrupted export again, writing only the keys not yet written.

--shard I/N applies only the keys whose key hash mod N is I (as revert and
repair shard them), with a checkpoint of its own (the table's tag
dynops:applied-through:shard-I-of-N) and 1/N of --max-write-units: N such
applies, in any order or at once, do what one does. The apply is complete
when every shard is through the end of the chain: the last shard to get
there moves dynops:applied-through (the shard tags stay, done). An apply as
another number of shards (or without --shard) while a sharded one is in
progress is refused (exit 2).

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
				t, err := time.Parse(time.RFC3339Nano, opts.Since)
				if err != nil {
					return factory.UsageErrorf("--since %q: give an RFC 3339 time, e.g. 2026-03-01T00:00:00Z (the full export's exportTime)", opts.Since)
				}
				opts.since = t
			}
			if opts.Shard != "" {
				sh, err := engine.ParseShard(opts.Shard)
				if err != nil {
					return factory.UsageErrorf("%w", err)
				}
				if sh.Count > export.MaxApplyShards {
					return factory.UsageErrorf("--shard %s: an apply takes at most %d shards (each shard holds one of the table's 50 tags)", opts.Shard, export.MaxApplyShards)
				}
				opts.shard = sh
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
	fl.StringVar(&opts.Shard, "shard", "", "I/N: apply only the keys whose key hash mod N is I, with a checkpoint of its own (N such applies do what one does; --max-write-units is split evenly across them)")
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
	// Protection first, from the table's tags (unreadable tags: protected).
	decided, err := guard.Decide(f, protect.ReadTable(ctx, db, opts.Table))
	if err != nil {
		return err
	}
	g, err := decided.Confirm(opts.Yes, opts.Confirm)
	if err != nil {
		return err
	}
	// A run that writes takes unverified exports on a protected table only as the break-glass role.
	if opts.Unverified != "" && !g.DryRun() {
		if err := decided.AllowException(ctx, "--"+shared.UnverifiedFlag); err != nil {
			return err
		}
	}
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	// Whom to believe and where to continue, before anything is written or
	// the audit started.
	plan, err := export.PlanApply(ctx, db, store, export.ApplyRequest{Bucket: opts.Bucket, Prefixes: opts.Prefixes, Table: opts.Table,
		SourceTable: opts.SourceTable, Since: opts.since, Shard: opts.shard, Trust: shared.Trust(clients, opts.Unverified)})
	if errors.Is(err, export.ErrNoSource) || errors.Is(err, export.ErrShardMix) {
		return factory.UsageErrorf("%w", err)
	} else if err != nil {
		return shared.Refusal(err)
	}
	wb, err := opts.Budgets.Split(opts.shard.Count).Resolve(ctx, db, capacity.Write, opts.Table)
	if err != nil {
		return err
	}
	if err := startAudit(ctx, f, g, opts, plan, wb); err != nil {
		return err
	}
	rep, err := export.ApplyIncrements(ctx, db, store, plan.Start, plan.Increments, export.ApplyOptions{
		Table: opts.Table, Apply: !g.DryRun(), Act: f.Audit.Act, WriteBudget: wb.Bucket, Planned: opts.Plan.Planned(),
		Current: export.Current(db, opts.Table), Shard: opts.shard, Progress: progress(f, wb.Bucket)})
	f.IOStreams.Done()
	finish(f, g, &rep, plan, wb, opts.Unverified)
	if g.DryRun() && err == nil {
		puts, deletes := rep.PendingChanges()
		rep.WriteEstimate = capacity.ItemWrites(ctx, db, opts.Table, puts, deletes, wb, prices, clients.Region())
	}
	if verr := view.Results(f, func(r export.ApplyReport) error { return showApply(f, r) }).Show(rep); err != nil || verr != nil || !g.DryRun() {
		return errors.Join(err, verr)
	}
	if err := opts.Plan.Finish(f); err != nil {
		return err
	}
	g.PrintDryRun("apply them")
	return nil
}

// startAudit records the plan of a dry run, or the started record of a run
// that writes.
func startAudit(ctx context.Context, f *factory.Factory, g *guard.Confirmed, opts *Options, plan export.ApplyPlan, wb capacity.Budget) error {
	arns := shared.ExportArns(plan.Vouched)
	if g.DryRun() {
		f.Audit.Act(audit.ActPlanExportApply, opts.Table, map[string]any{"bucket": opts.Bucket, "prefixes": opts.Prefixes, "since": plan.Start.Base, "write_budget": wb,
			"source_table": plan.Source, "export_arns": arns, "unverified_exports": opts.Unverified, "shard": opts.Shard})
		return nil
	}
	_, err := g.StartAudit(ctx, audit.Plan{Targets: append([]string{opts.Table, "s3://" + opts.Bucket, plan.Source}, arns...),
		Counts: map[string]int64{"exports_to_apply": int64(len(plan.Increments))}})
	return err
}

// progress is the apply's progress line, with the write budget's use.
func progress(f *factory.Factory, bucket *capacity.Bucket) func(export.Increment, int, int) {
	return func(inc export.Increment, done, total int) {
		if bucket == nil {
			f.IOStreams.Progress("applying %s: %d/%d changes", inc.Dir, done, total)
			return
		}
		u := bucket.Usage()
		f.IOStreams.Progress("applying %s: %d/%d changes, %.1f WCU/s of %.1f", inc.Dir, done, total, u.PerSecond, u.Budget)
	}
}

// finish fills in what the run established around the apply and audits the
// write capacity used.
func finish(f *factory.Factory, g *guard.Confirmed, rep *export.ApplyReport, plan export.ApplyPlan, wb capacity.Budget, unverified string) {
	if wb.Bucket != nil && !g.DryRun() {
		u := wb.Bucket.Usage()
		rep.WriteCapacity = &u
		f.Audit.Act(audit.ActExportApply, rep.Table, map[string]any{"write_capacity": u, "write_budget": wb})
	}
	rep.WriteBudget = &wb
	rep.SinceFrom = plan.Start.From
	rep.SourceTable, rep.Vouched, rep.Unverified = plan.Source, plan.Vouched, unverified
}

// showApply is the human view of an apply.
func showApply(f *factory.Factory, rep export.ApplyReport) error {
	out := f.IOStreams.Out
	if rep.DryRun {
		fmt.Fprintln(out, guard.DryRunHeader(fmt.Sprintf("apply onto %s%s, from %s (%s):", rep.Table, ofShard(rep.Shard), rep.Since.Format(time.RFC3339Nano), rep.SinceFrom)))
	} else {
		fmt.Fprintf(out, "applied onto %s%s, from %s (%s):\n", rep.Table, ofShard(rep.Shard), rep.Since.Format(time.RFC3339Nano), rep.SinceFrom)
	}
	shared.PrintVouched(out, rep.SourceTable, rep.Vouched, rep.Unverified)
	for _, r := range rep.Increments {
		state := fmt.Sprintf("%d puts, %d deletes", r.Puts, r.Deletes)
		switch {
		case r.Skipped:
			state = "already applied: skipped"
		case r.Unchanged > 0:
			state += fmt.Sprintf(" (%d already so, not written)", r.Unchanged)
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
	if rep.DryRun {
		return nil
	}
	if rep.Shard == "" {
		fmt.Fprintf(out, "%s is applied through %s (its %s tag, read back)\n", rep.Table, rep.Through.Format(time.RFC3339Nano), export.TagAppliedThrough)
		return nil
	}
	fmt.Fprintf(out, "shard %s of %s is applied through %s (its own checkpoint tag, read back)\n", rep.Shard, rep.Table, rep.Through.Format(time.RFC3339Nano))
	if st := rep.Shards; st != nil && st.Complete {
		fmt.Fprintf(out, "every shard is through %s: %s is applied through it (its %s tag, read back)\n", st.End.Format(time.RFC3339Nano), rep.Table, export.TagAppliedThrough)
	} else if st != nil {
		fmt.Fprintf(out, "not complete: shard(s) %s are not yet through %s; run them (the same command with their --shard)\n", strings.Join(st.Waiting, ", "), st.End.Format(time.RFC3339Nano))
	}
	return nil
}

func ofShard(shard string) string {
	if shard == "" {
		return ""
	}
	return " (shard " + shard + ": the keys whose key hash mod N is I)"
}
