// Package revert implements `dynops export revert`: undo what a time window
// did to a table, from the incremental exports of that window (their old
// images), with no restore.
package revert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
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
	"github.com/dynops/dynops/internal/safefile"
)

// Options of `dynops export revert`.
type Options struct {
	Bucket       string
	BucketRegion string
	Prefixes     []string
	Table        string
	Workers      int
	Yes          bool
	Confirm      []string
	// Budgets holds --max-write-units, the write budget on Table.
	budget.Budgets
	// PriceFile holds on-demand prices for the estimate.
	PriceFile string
	// Unverified is the --unverified-exports reason ("": none).
	Unverified string
	// Plan is --plan-out FILE: a dry run's per-key before/after images.
	Plan shared.PlanOut
	// VersionAttribute is --version-attribute NAME: writes are conditional
	// on the table's version attribute and increment it.
	VersionAttribute string
	// ConflictsFile receives every conflict, one JSON line each (0600).
	ConflictsFile string
	// Shard is --shard I/N: revert only the keys of that shard ("": all).
	Shard string
	shard engine.Shard
}

// NewCmdRevert returns `dynops export revert`. runF replaces Run in tests of flag parsing.
func NewCmdRevert(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "revert --bucket B --prefix P [--prefix P2 ...] --table T [--yes]",
		Short: "Undo what a time window did to a table, from that window's incremental exports",
		Long: `Revert undoes the writes of a time window (a bad deploy, a runaway job) from
the incremental exports of that window, exported with NEW_AND_OLD_IMAGES
(dynops export incremental does): no restore, no second table.

The exports under each --prefix are ordered by window and must follow each
other without gap or overlap; the window reverted runs from the first one's
start to the last one's end. Each export is verified first (the code of
'dynops export verify'). For every key the window changed, its image at the
window's start is the old image of its first change, and its image at the
window's end the new image of its last.

Each key is read back (a consistent GetItem) and:
  - still as the window left it: put back to its image at the window's start,
    or deleted when the window created it, with a condition that it is still
    unchanged (a write racing the revert wins and is left alone);
  - already as it was at the window's start: counted, not written (a re-run);
  - changed after the window: a conflict, left alone and listed, so a later
    legitimate write is never lost. Exit status 1 when there are conflicts.
A condition can only name the attributes read: an attribute another writer
adds between the read and the write is replaced by the put, so each write
asks for the item it replaced and such a key is listed as a conflict
(reverted) with the attributes it replaced. With --version-attribute NAME
(the application's optimistic-locking version, as the AWS SDKs' DynamoDBMapper
and Enhanced Client keep it) each write is conditional on that version and
increments it, so a versioned writer's change in between makes it fail.
    The terminal shows a sample; -o json and --conflicts-file FILE (mode
    0600, one JSON line a key) have them all.

Only exports DynamoDB vouches for are read: each manifest must name --table
and --bucket and lie under its own s3Prefix, DescribeExport must say the
export is COMPLETED and agree with it (table, bucket, prefix, manifest,
times, type, view, item count), and no data file may have been written after
the export ended. The plan prints the source table and every export ARN.
Exports DynamoDB cannot answer for (copied from another account; the local
emulator, which keeps no export records) are refused unless
--unverified-exports "REASON" accepts them: printed, audited, and refused on
a protected table unless run as the break-glass role. A refusal exits 2 and
changes nothing.

Writes hold to a budget (--max-write-units; by default 25 % of a provisioned
table's write capacity, none on an on-demand table). Without --yes it prints
what it would do and changes nothing; a protected table also needs its name
typed (or --confirm NAME). Interrupted: run it again.`,
		Example: `  dynops export revert --bucket prod-hoge-exports --prefix incident/INC-1234 --table prod-hoge-user
  dynops export revert --bucket prod-hoge-exports --prefix incident/INC-1234 --table prod-hoge-user --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Bucket == "" || opts.Table == "" || len(opts.Prefixes) == 0 {
				return factory.UsageErrorf("export revert needs --bucket BUCKET, --prefix PREFIX (repeatable: the incremental exports of the window) and --table TABLE")
			}
			if err := shared.CheckExportFlags(cmd, opts.Prefixes, opts.Unverified); err != nil {
				return err
			}
			if opts.Shard != "" {
				sh, err := engine.ParseShard(opts.Shard)
				if err != nil {
					return factory.UsageErrorf("%w", err)
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
	fl.StringArrayVar(&opts.Prefixes, "prefix", nil, "prefix of the window's incremental export(s) (repeatable)")
	fl.StringVar(&opts.Table, "table", "", "the table to revert")
	fl.IntVar(&opts.Workers, "workers", 8, "keys handled at once")
	flagcheck.Range(fl, "workers", "1", "64", "keys handled at once")
	opts.Budgets.AddFlags(fl, "", "--table")
	budget.AddPriceFlag(fl, &opts.PriceFile)
	shared.AddUnverifiedFlag(fl, &opts.Unverified)
	fl.StringVar(&opts.Shard, "shard", "", "I/N: revert only the keys whose key hash mod N is I (N such reverts do what one does; --max-write-units is split evenly across them)")
	shared.AddPlanOutFlags(fl, &opts.Plan)
	fl.StringVar(&opts.VersionAttribute, "version-attribute", "", "NAME of the table's version attribute (a number the application's data-access layer increments): each write is conditional on it and increments it")
	fl.StringVar(&opts.ConflictsFile, "conflicts-file", "", "write every conflict to FILE (new, mode 0600; one JSON line a key: key, reason)")
	fl.BoolVar(&opts.Yes, "yes", false, "do it (default: a dry run that prints what it would do)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the table name of a protected revert")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "keys reverted so far stay reverted (each write was conditional); run the same revert again: reverted keys count as already reverted")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "bucket")
	return cmd
}

// Run plans the revert; with --yes (and the confirmation of a protected table) it reverts.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	store := shared.BucketStore(clients, opts.Bucket, opts.BucketRegion)
	db := clients.DynamoDB()
	// Protection first, from the table's tags read from the service
	// (unreadable tags leave it protected).
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
		if err := decided.AllowException(ctx, "--unverified-exports"); err != nil {
			return err
		}
	}
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	if opts.ConflictsFile != "" {
		if err := safefile.CheckNew(opts.ConflictsFile, "conflicts file", false); err != nil {
			return factory.UsageErrorf("--conflicts-file: %w", err)
		}
	}
	// Everything that can refuse runs before the first write and before the
	// audit's started record: the chain, the view, and whom to believe.
	src, err := export.PrepareRevert(ctx, db, store, opts.Prefixes, opts.Table, opts.Bucket, shared.Trust(clients, opts.Unverified))
	if errors.Is(err, export.ErrNotRevertable) {
		return factory.UsageErrorf("%w; nothing was changed", err)
	}
	if err != nil {
		return shared.Refusal(err)
	}
	wb, err := opts.Budgets.Resolve(ctx, db, capacity.Write, opts.Table)
	if err != nil {
		return err
	}
	if wb, err = wb.Split(opts.shard.Count); err != nil {
		return err
	}
	rep, err := revert(ctx, f, clients, g, opts, src, wb, prices)
	return show(f, g, opts, rep, err)
}

// revert audits the start of a run that writes, reverts (or plans) with a
// progress bar, and audits what it did.
func revert(ctx context.Context, f *factory.Factory, clients awsclients.Set, g *guard.Confirmed, opts *Options, src export.RevertSource, wb capacity.Budget, prices *capacity.Prices) (export.RevertReport, error) {
	db, apply, arns := clients.DynamoDB(), !g.DryRun(), shared.ExportArns(src.Vouched)
	if apply {
		if _, err := g.StartAudit(ctx, audit.Plan{Targets: append([]string{opts.Table, "s3://" + opts.Bucket, src.TableArn}, arns...),
			Counts: map[string]int64{"exports": int64(src.Exports())}}); err != nil {
			return export.RevertReport{}, err
		}
	}
	bar := f.IOStreams.StartProgress("export revert: keys", 0)
	rep, err := export.Revert(ctx, db, shared.BucketStore(clients, opts.Bucket, opts.BucketRegion), src, export.RevertOptions{
		Table: opts.Table, Apply: apply, Workers: opts.Workers, WriteBudget: wb.Bucket, Shard: opts.shard, Planned: opts.Plan.Planned(),
		VersionAttribute: opts.VersionAttribute,
		Progress: func(done, total int64) {
			if wb.Bucket != nil {
				u := wb.Bucket.Usage()
				bar.Status("%.1f WCU/s of %.1f", u.PerSecond, u.Budget)
			}
			bar.SetTotal(total)
			bar.Set(done)
		},
	})
	bar.Done()
	rep.SourceTable, rep.Vouched, rep.Unverified = src.TableArn, src.Vouched, opts.Unverified
	rep.WriteBudget = &wb
	if !apply && err == nil {
		// The estimate: each restore a whole item of the table's average
		// size, each delete one unit.
		rep.WriteEstimate = capacity.ItemWrites(ctx, db, opts.Table, rep.Restores, rep.Deletes, wb, prices, clients.Region())
	}
	if wb.Bucket != nil && apply {
		u := wb.Bucket.Usage()
		rep.WriteCapacity = &u
	}
	// "keys" would be read as a key and hashed: the count and the digest of
	// the keys have names of their own.
	detail := map[string]any{"bucket": opts.Bucket, "prefixes": opts.Prefixes, "source_table": src.TableArn, "export_arns": arns,
		"unverified_exports": opts.Unverified, "from": rep.From, "to": rep.To, "keys_changed": rep.Keys, "keys_digest": rep.KeysDigest,
		"restores": rep.Restores, "deletes": rep.Deletes, "already_reverted": rep.AlreadyReverted, "conflicts": rep.Conflicts,
		"changed_since_read": rep.ChangedSinceRead, "version_attribute": opts.VersionAttribute,
		"write_budget": wb, "write_capacity": rep.WriteCapacity, "shard": rep.Shard}
	if apply {
		f.Audit.Act(audit.ActExportRevert, opts.Table, detail)
		f.Audit.Counts(map[string]int64{"keys": rep.Keys, "restores": rep.Restores, "deletes": rep.Deletes,
			"already_reverted": rep.AlreadyReverted, "conflicts": rep.Conflicts, "changed_since_read": rep.ChangedSinceRead})
	} else {
		f.Audit.Act(audit.ActPlanExportRevert, opts.Table, detail)
	}
	if opts.ConflictsFile != "" {
		if werr := writeConflicts(opts.ConflictsFile, rep.ConflictKeys); werr != nil && err == nil {
			err = werr
		}
	}
	return rep, err
}

// show shows the report (also after a failure that handled some keys), and
// ends a dry run with its plan file and notice; exit 1 with conflicts.
func show(f *factory.Factory, g *guard.Confirmed, opts *Options, rep export.RevertReport, err error) error {
	v := view.Results(f, func(rep export.RevertReport) error { return printHuman(f, rep) })
	if err != nil {
		if rep.Keys > 0 {
			_ = v.Show(rep)
		}
		return err
	}
	if err := v.Show(rep); err != nil {
		return err
	}
	if g.DryRun() {
		if err := opts.Plan.Finish(f); err != nil {
			return err
		}
		g.PrintDryRun("revert the window")
		return nil
	}
	if rep.Conflicts+rep.ChangedSinceRead > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// writeConflicts writes every conflict as a JSON line to a new 0600 file.
func writeConflicts(path string, cs []export.RevertConflict) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, c := range cs {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return safefile.WriteFile(path, "conflicts file", b.Bytes(), false)
}

// printHuman is the human view of a revert.
func printHuman(f *factory.Factory, rep export.RevertReport) error {
	out := f.IOStreams.Out
	verb := "reverted"
	if rep.DryRun {
		verb = guard.DryRunHeader("revert")
	}
	fmt.Fprintf(out, "%s the window %s .. %s on %s (%d export(s), %d key(s) changed in it):\n", verb,
		rep.From.Format(time.RFC3339), rep.To.Format(time.RFC3339), rep.Table, len(rep.Exports), rep.Keys)
	shared.PrintVouched(out, rep.SourceTable, rep.Vouched, rep.Unverified)
	rows := [][]string{
		{"put back to their image at the window's start", fmt.Sprint(rep.Restores)},
		{"deleted (created in the window)", fmt.Sprint(rep.Deletes)},
		{"already as they were (not written)", fmt.Sprint(rep.AlreadyReverted)},
		{"changed after the window (conflicts, left alone)", fmt.Sprint(rep.Conflicts)},
	}
	if rep.ChangedSinceRead > 0 {
		rows = append(rows, []string{"written over a change made since the read (conflicts)", fmt.Sprint(rep.ChangedSinceRead)})
	}
	if err := f.IOStreams.Table([]string{"KEYS", "COUNT"}, rows); err != nil {
		return err
	}
	for _, c := range rep.ConflictSample {
		fmt.Fprintf(out, "  conflict %s: %s\n", c.Key, c.Reason)
	}
	if n := int64(len(rep.ConflictSample)); n < rep.Conflicts+rep.ChangedSinceRead {
		fmt.Fprintf(out, "  ... and %d more: every conflict is in -o json and --conflicts-file FILE\n", rep.Conflicts+rep.ChangedSinceRead-n)
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
	if rep.Conflicts > 0 {
		fmt.Fprintf(out, "\n%d key(s) changed after the window were left alone: read them (dynops item get) and decide per key.\n", rep.Conflicts)
	}
	if rep.ChangedSinceRead > 0 {
		fmt.Fprintf(out, "\n%d key(s) were reverted, but another writer changed them between the read and the write: the write replaced the attributes listed; read them (dynops item get) and decide.\n", rep.ChangedSinceRead)
	}
	return nil
}
