// Package diff implements `dynops table diff`.
package diff

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	exportshared "github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/tablediff"
)

// Options of `dynops table diff`.
type Options struct {
	Diff     tablediff.Options
	ExitCode bool
	// SourceExport and TargetExport are export URIs (s3://BUCKET/PREFIX or
	// a local copy) that replace --source / --target.
	SourceExport, TargetExport string
	// Budgets holds --max-read-units, the read budget on each scanned table.
	budget.Budgets
	// PriceFile holds on-demand prices for the estimate.
	PriceFile string
	// Sharded runs the diff as shards on an engine (sharded.go).
	Sharded Sharded
	// Unverified is the --unverified-exports reason for exports DynamoDB
	// cannot vouch for ("": none).
	Unverified string
}

// NewCmdDiff returns `dynops table diff`. runF replaces the run function in tests of flag parsing.
func NewCmdDiff(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	d := &opts.Diff
	cmd := &cobra.Command{
		Use:   "diff (--source A | --source-export S3URI) (--target B | --target-export S3URI) [--keys-out FILE]",
		Short: "Compare the items of two tables by primary key",
		Long: `Diff reads both tables with parallel segmented Scans and compares items by
primary key: keys only in the source, only in the target, and changed. Memory
stays bounded: items are reduced to key + checksum and spilled to on-disk
buckets by key hash, then compared one bucket at a time.

--source-export / --target-export read a full export (AWS's format:
manifest-summary.json, manifest-files.json, gzip DynamoDB JSON) instead of a
table: no read capacity, no restored table. Each export must be one
DynamoDB vouches for (DescribeExport agrees with its manifest; see 'dynops
export revert'), or be accepted with --unverified-exports "REASON"
(audited). Every data file is checked against the manifest (MD5, item
count) as it streams; a damaged export stops the diff. With exports on both
sides give the key with --key.

--keys-out writes every differing key (JSON lines) for ` + "`dynops pitr repair --keys`" + `.
After a restore, diff --source RESTORED --target ORIGINAL: only-in-source are
items deleted since, changed are items overwritten since, only-in-target are
items written since (kept by repair unless --delete-extra).

Each scanned table's reads hold to a budget (--max-read-units, capacity units
per second as DynamoDB reports them, shared by all segments): by default 25 %
of a provisioned table's read capacity, none on an on-demand table. The
budgets are printed before the scan; progress shows the units used per
second; the report and the audit record what was used.`,
		Example: `  dynops table diff --source prod-hoge-user-restored-20261121t094500z --target prod-hoge-user --keys-out keys.jsonl
  dynops table diff --source A --target B --segments 8 --attributes status,email -o json
  dynops table diff --source-export s3://prod-hoge-exports/full/AWSDynamoDB/01732000000000-abcd1234 --target prod-hoge-user --keys-out keys.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := exportshared.CheckExportFlags(cmd, nil, opts.Unverified); err != nil {
				return err
			}
			if opts.Unverified != "" && opts.SourceExport == "" && opts.TargetExport == "" {
				return factory.UsageErrorf("--unverified-exports goes with --source-export or --target-export: a table needs no vouching")
			}
			for _, side := range []struct{ table, export, name string }{
				{d.Source, opts.SourceExport, "source"}, {d.Target, opts.TargetExport, "target"}} {
				if (side.table == "") == (side.export == "") {
					return factory.UsageErrorf("table diff needs one --%s: a table (--%[1]s NAME) or a full export (--%[1]s-export s3://BUCKET/PREFIX)", side.name)
				}
			}
			if opts.SourceExport != "" && opts.TargetExport != "" && len(d.KeyNames) == 0 {
				return factory.UsageErrorf("both sides are exports, which do not record the table's key: add --key HASH[,RANGE]")
			}
			if len(d.KeyNames) > 2 {
				return factory.UsageErrorf("--key %v: a primary key is one attribute (hash) or two (hash,range)", d.KeyNames)
			}
			if d.Source != "" && d.Source == d.Target || opts.SourceExport != "" && opts.SourceExport == opts.TargetExport {
				return factory.UsageErrorf("--source and --target are both %s: compare two different tables or exports", d.Source+opts.SourceExport)
			}
			if err := opts.Sharded.check(cmd.Flags()); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.Sharded.on() {
				return runSharded(cmd.Context(), f, opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&d.Source, "source", "", "table A (e.g. the restored table)")
	fl.StringVar(&d.Target, "target", "", "table B (e.g. the original table)")
	fl.IntVar(&d.Segments, "segments", 4, "parallel Scan segments per table")
	flagcheck.Range(fl, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fl.IntVar(&d.Buckets, "buckets", 0, "on-disk spill buckets (0: one per 250,000 items, 16 to 512)")
	flagcheck.Range(fl, "buckets", "0", "4096", "0: sized from the item count")
	fl.StringSliceVar(&d.Attributes, "attributes", nil, "compare only these attributes (plus the key): names or document paths (profile.name, tags[0]); one no item has is an error; default: whole items")
	fl.IntVar(&d.SampleSize, "sample", 10, "keys of each kind to list")
	flagcheck.Range(fl, "sample", "1", "", "at least 1 key of each kind")
	fl.StringVar(&d.KeysOut, "keys-out", "", "write every differing key to FILE (JSON lines, for pitr repair --keys); created 0600, an existing file only with --force")
	fl.BoolVar(&d.KeysForce, "force", false, "let --keys-out overwrite an existing file")
	fl.StringVar(&d.TempDir, "temp-dir", "", "where the spill buckets go (default: the system temp dir)")
	fl.BoolVar(&opts.ExitCode, "exit-code", false, "exit 1 when the tables differ (like diff(1))")
	fl.StringVar(&opts.SourceExport, "source-export", "", "a full export instead of --source: s3://BUCKET/PREFIX/AWSDynamoDB/EXPORT_ID (or a local copy)")
	fl.StringVar(&opts.TargetExport, "target-export", "", "a full export instead of --target")
	fl.StringSliceVar(&d.KeyNames, "key", nil, "primary key HASH[,RANGE], needed when both sides are exports")
	opts.Budgets.AddFlags(fl, "each scanned table", "")
	budget.AddPriceFlag(fl, &opts.PriceFile)
	fl.IntVar(&d.ExportParallel, "export-parallel", 4, "export data files read at once")
	exportshared.AddUnverifiedFlag(fl, &opts.Unverified)
	flagcheck.Range(fl, "export-parallel", "1", "1024", "export data files read at once")
	opts.Sharded.addFlags(fl)
	cmdfacts.SetInterrupt(cmd, "nothing was changed and its temporary files were removed (a sharded run's objects stay under its --run-prefix); run the diff again (with --engine, the same --run-id continues the run)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTimeout(cmd, time.Minute)
	cmdfacts.SetTargets(cmd, "target", "source")
	return cmd
}

// Run compares the tables and prints the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	d, err := openSides(ctx, f, clients, opts)
	if err != nil {
		return err
	}
	d.Now = f.Now
	db := clients.DynamoDB()
	// The key check, the budgets, the estimate and the diff itself all read
	// the tables' descriptions: one DescribeTable per table for all of them.
	desc := capacity.DescribeOnce(db)
	total, err := itemTotal(ctx, desc, d)
	if err != nil {
		return err
	}
	budgets, buckets, err := readBudgets(ctx, clients, desc, d, opts)
	if err != nil {
		return err
	}
	v := newView(f)
	v.Budgets(budgets, 1)
	bar := f.IOStreams.StartProgress("table diff: items scanned", total)
	d.Progress = func(a, b int64) {
		if status := budgetStatus(budgets); status != "" {
			bar.Status("%s", status)
		}
		bar.Set(a + b)
	}
	rep, err := tablediff.Diff(ctx, struct {
		tablediff.Describer
		capacity.Scanner
	}{desc, capacity.Scans(db, buckets)}, d)
	bar.Done()
	if err != nil {
		return err
	}
	return finish(f, v, opts, rep, budgets)
}

// itemTotal is both tables' ItemCount (approximate, refreshed every ~6 h)
// after checking they share a key; unknown (0) when a side is an export.
func itemTotal(ctx context.Context, db tablediff.Describer, d tablediff.Options) (int64, error) {
	if d.SourceExport != nil || d.TargetExport != nil {
		return 0, nil
	}
	_, count, err := tablediff.SameKey(ctx, db, d.Source, d.Target)
	return 2 * count, err
}

// budgetStatus is the units used per second of each budget, for progress.
func budgetStatus(budgets []capacity.Use) string {
	var parts []string
	for _, bu := range budgets {
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			parts = append(parts, fmt.Sprintf("%s %.1f RCU/s of %.1f", bu.Table, u.PerSecond, u.Budget))
		}
	}
	return strings.Join(parts, " ")
}

// finish audits the counts, shows the report and gives the exit code.
func finish(f *factory.Factory, v diffView, opts *Options, rep *tablediff.Report, budgets []capacity.Use) error {
	counts := map[string]int64{"source_items": rep.SourceItems, "target_items": rep.TargetItems, "same": rep.Same,
		"only_in_source": rep.OnlyInSource, "only_in_target": rep.OnlyInTarget, "changed": rep.Changed}
	for i, bu := range budgets {
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			budgets[i].Used = &u
			counts["read_units_"+bu.Table] = int64(math.Ceil(u.Used))
		}
	}
	f.Audit.Counts(counts)
	if err := v.Report(report{Report: rep, ReadBudgets: budgets}); err != nil {
		return err
	}
	if opts.ExitCode && rep.Differences() > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// openSides opens the export sides of opts (a usage error names the flag).
func openSides(ctx context.Context, f *factory.Factory, clients awsclients.Set, opts *Options) (tablediff.Options, error) {
	var err error
	d := opts.Diff
	s3 := func() (exportverify.S3API, error) { return clients.S3(), nil }
	if opts.SourceExport != "" {
		if d.SourceExport, err = exportverify.OpenExport(opts.SourceExport, s3); err != nil {
			return d, factory.UsageErrorf("--source-export: %w", err)
		}
		d.Source = opts.SourceExport
		if _, _, err := exportshared.VouchExport(ctx, f, clients, d.SourceExport, exportverify.Expect{AnyTable: true}, opts.Unverified, opts.SourceExport); err != nil {
			return d, err
		}
	}
	if opts.TargetExport != "" {
		if d.TargetExport, err = exportverify.OpenExport(opts.TargetExport, s3); err != nil {
			return d, factory.UsageErrorf("--target-export: %w", err)
		}
		d.Target = opts.TargetExport
		if _, _, err := exportshared.VouchExport(ctx, f, clients, d.TargetExport, exportverify.Expect{AnyTable: true}, opts.Unverified, opts.TargetExport); err != nil {
			return d, err
		}
	}
	return d, nil
}

// readBudgets resolves the read budget of each scanned table (an export
// side reads none) with its estimate (capacity.ScanEstimate: the sample it
// may read is charged to the budget).
func readBudgets(ctx context.Context, clients awsclients.Set, db capacity.Describer, d tablediff.Options, opts *Options) ([]capacity.Use, map[string]*capacity.Bucket, error) {
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return nil, nil, factory.UsageErrorf("%w", err)
	}
	budgets := []capacity.Use{} // [] in JSON when both sides are exports
	buckets := map[string]*capacity.Bucket{}
	for _, side := range []struct {
		table    string
		isExport bool
	}{{d.Source, d.SourceExport != nil}, {d.Target, d.TargetExport != nil}} {
		if side.isExport {
			continue
		}
		b, err := opts.Budgets.Resolve(ctx, db, capacity.Read, side.table)
		if err != nil {
			return nil, nil, err
		}
		buckets[side.table] = b.Bucket
		// The diff's Scans are eventually consistent.
		est, err := capacity.ScanEstimate(ctx, db, capacity.Scans(clients.DynamoDB(), buckets), side.table, false)
		if err != nil {
			return nil, nil, err
		}
		est.Finish(b, prices, clients.Region())
		budgets = append(budgets, capacity.Use{Budget: b, Estimate: est})
	}
	return budgets, buckets, nil
}
