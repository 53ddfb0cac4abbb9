// Package backfill implements `dynops migrate backfill`.
package backfill

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/adopt"
	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	exportshared "github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	tableadopt "github.com/dynops/dynops/internal/cmd/table/adopt"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/internal/tablesettings"
)

// Options of `dynops migrate backfill`.
type Options struct {
	shared.Flags
	budget.Budgets
	Confirm              []string
	Segments             int
	Writers              int
	MaxWritesPerSecond   int
	AllowUnmatched       bool
	AllowUntransformable bool
	Restart              bool
	// FromExport is a finished full export of the source to read instead of a Scan.
	FromExport string
	// ExportTo starts a new export of the source into s3://BUCKET/PREFIX and reads it.
	ExportTo       string
	ExportParallel int
	// ImportTo creates the destinations with ImportTable from per-destination files written under s3://BUCKET/PREFIX.
	ImportTo string
	// Unverified is the --unverified-exports reason ("": none).
	Unverified string
}

// NewCmdBackfill returns `dynops migrate backfill`. runF replaces the run function in tests of flag parsing.
func NewCmdBackfill(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "backfill --source TABLE --routes FILE [--state FILE]",
		Short: "Copy every source item to its destination; resumable",
		Long: `Backfill first records the source stream's position (its shards, now), so the
catch-up later starts before the backfill's first read. It then reads the
source with a parallel segmented Scan (consistent reads), routes and
transforms each item, and writes it with BatchWriteItem, 25 items per call,
retrying unprocessed items with backoff (DDB-API-02), at most
--max-writes-per-second items per second.

Each segment's checkpoint (the last key whose page is fully written) is saved
in the state file: a killed backfill run again with the same --state resumes
where it stopped, and a finished one is not run twice (idempotent). A new
backfill refuses destinations that are not empty.

With --from-export (a finished full export of the source) or --export-to
s3://BUCKET/PREFIX (dynops starts a point-in-time export there and waits for
it), the items come from the export's data files instead of a Scan: the
source's read capacity is not used, the export's files are checked as
export verify checks them (MD5, size, item counts), --export-parallel files
are read at once and each is checkpointed once written in full. The catch-up
then starts from the export's time, so the source's stream must still hold
records that old (24 hours): an older export is refused before anything is
written. The source needs PITR for --export-to.

With --import-to s3://BUCKET/PREFIX as well, the destinations are not
written item by item: each export data file is routed and transformed into
one gzip DynamoDB JSON file per destination under PREFIX/DESTINATION/data/,
and each destination is then created by ImportTable (on demand, the
source's key, no index), given the guideline settings an import cannot set
(stream, PITR 35 days, TTL on ttl, the source's tags but usage, deletion
protection last) and read back. Every destination must not exist yet: one
that does is refused before anything is written. At the end dynops prints
each destination's tables.yaml entry and terraform import blocks (as
dynops table adopt does) to bring them under Terraform.

Before its first write it runs the checks of migrate plan (the source, the
destinations, and every source item: with an export, the items are checked
as they are read): what plan lists as a problem refuses the backfill, exit
2, nothing written. Items no rule matches, and items their route cannot
transform (a rename onto an attribute the item already has), are such
problems unless --allow-unmatched / --allow-untransformable: then they are
counted, sampled and left behind while the rest is written. Catch-up and
cutover run the same checks; verify leaves such items out, counted.`,
		Example: `  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml
  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml --segments 8 --max-writes-per-second 2000
  dynops migrate backfill --source prod-aiagent-single --routes routes.yaml --export-to s3://prod-exports/migrate --confirm prod-aiagent-single
  dynops migrate backfill --source prod-aiagent-single --routes routes.yaml --export-to s3://prod-exports/migrate --import-to s3://prod-exports/migrate-import`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if err := exportshared.CheckExportFlags(cmd, nil, opts.Unverified); err != nil {
				return err
			}
			if opts.FromExport != "" && opts.ExportTo != "" {
				return factory.UsageErrorf("--from-export and --export-to both given: read a finished export (--from-export) or start a new one (--export-to), not both")
			}
			if opts.ExportTo != "" {
				if _, err := parseS3Target("--export-to", opts.ExportTo); err != nil {
					return err
				}
			}
			if opts.ImportTo != "" {
				if opts.FromExport == "" && opts.ExportTo == "" {
					return factory.UsageErrorf("--import-to needs the export it transforms: add --from-export EXPORT or --export-to s3://BUCKET/PREFIX")
				}
				if _, err := parseS3Target("--import-to", opts.ImportTo); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddFlags(cmd, &opts.Flags)
	shared.AddConfirmFlag(cmd, &opts.Confirm)
	fl := cmd.Flags()
	fl.IntVar(&opts.Segments, "segments", 4, "parallel Scan segments (a resumed backfill keeps its own)")
	flagcheck.Range(fl, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fl.IntVar(&opts.Writers, "writers", 2, "concurrent BatchWriteItem calls per segment: --segments x --writers writers, shared by all segments")
	flagcheck.Range(fl, "writers", "1", "64", "per segment: --segments x --writers calls at once")
	fl.IntVar(&opts.MaxWritesPerSecond, "max-writes-per-second", 0, "cap on items written per second (0: no cap)")
	flagcheck.Range(fl, "max-writes-per-second", "0", "", "items per second; 0: no cap")
	opts.Budgets.AddFlags(cmd.Flags(), "the source (a Scan; none with --from-export)", "each destination table (none with --import-to)")
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "leave items no rule matches behind instead of failing")
	fl.BoolVar(&opts.AllowUntransformable, "allow-untransformable", false, "leave items their route cannot transform behind instead of failing")
	fl.StringVar(&opts.FromExport, "from-export", "", "read this finished full export of the source (s3://BUCKET/PREFIX/AWSDynamoDB/EXPORT_ID or a local copy) instead of scanning it")
	fl.StringVar(&opts.ExportTo, "export-to", "", "start a point-in-time export of the source into s3://BUCKET/PREFIX and read it instead of scanning the source")
	fl.IntVar(&opts.ExportParallel, "export-parallel", 4, "export data files read at once (with --from-export or --export-to)")
	flagcheck.Range(fl, "export-parallel", "1", "1024", "export data files read at once")
	fl.StringVar(&opts.ImportTo, "import-to", "", "create the destinations (which must not exist) with ImportTable from per-destination files written under s3://BUCKET/PREFIX, instead of writing into existing tables (with --from-export or --export-to)")
	exportshared.AddUnverifiedFlag(fl, &opts.Unverified)
	fl.BoolVar(&opts.Restart, "restart", false, "start a new backfill (new stream position) over a previous one; destinations must be empty")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "items copied so far stay written and the --state file records the position (and the export being read, which goes on in AWS if dynops started it); run the same backfill again with the same --state: it resumes there")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// check refuses protected destinations first (the guard), then runs the
// plan's checks before anything is written.
func check(ctx context.Context, f *factory.Factory, l *shared.Loaded, opts *Options) error {
	var exceptions []string
	if opts.Unverified != "" {
		exceptions = append(exceptions, "--"+exportshared.UnverifiedFlag)
	}
	if err := shared.ConfirmWrites(ctx, f, l, opts.Confirm, opts.ImportTo != "", exceptions...); err != nil {
		return err
	}
	// A resumed backfill's destinations hold its items; one that reads an
	// export does not scan the source for the check (the export spares the
	// source's reads): its items are checked as they are read.
	return shared.Preflight(ctx, f, l, migrate.PreflightOptions{
		Written: l.State.Backfill != nil && !opts.Restart, Items: opts.FromExport == "" && opts.ExportTo == "", Creates: opts.ImportTo != "",
		AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable, Segments: opts.Segments})
}

// Run runs (or resumes) the backfill.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, true)
	if err != nil {
		return err
	}
	if err := check(ctx, f, l, opts); err != nil {
		return err
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	// Reads hold to the source's budget unless an export is read instead;
	// writes to each destination's, unless ImportTable creates them.
	var scanned, written []string
	if opts.FromExport == "" && opts.ImportTo == "" {
		scanned = []string{opts.Source}
	}
	if opts.ImportTo == "" {
		written = l.Input.Routes.Tables()
	}
	if err := shared.Hold(ctx, f, &opts.Budgets, &c, scanned, written); err != nil {
		return err
	}
	defer opts.Budgets.Record(f)
	exp, err := exportOptions(ctx, f, opts)
	if err != nil {
		return err
	}
	res, err := migrate.Backfill(ctx, c, backfillOptions(f, opts, l, exp), l.State)
	f.IOStreams.Done()
	if err != nil && !migrate.LeftBehind(err) {
		return shared.Refusal(err)
	}
	if !res.AlreadyDone {
		f.Audit.Act(audit.ActBackfillItems, opts.Source, map[string]any{"written": res.Written, "unmatched": res.Unmatched,
			"untransformable": res.Untransformable, "resumed": res.Resumed})
	}
	adopted, aerr := adoptImported(ctx, f, res)
	if perr := show(f, result{res, adopted, opts.Budgets.Uses()}); perr != nil {
		return perr
	}
	if err == nil {
		err = aerr
	}
	return err
}

// backfillOptions are the backfill's settings from the flags, with the
// audit record of its start and its progress on stderr.
func backfillOptions(f *factory.Factory, opts *Options, l *shared.Loaded, exp *migrate.ExportOptions) migrate.BackfillOptions {
	return migrate.BackfillOptions{
		Input: l.Input, Segments: opts.Segments, Writers: opts.Writers, MaxWritesPerSecond: opts.MaxWritesPerSecond,
		AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable, Restart: opts.Restart, Now: f.Now,
		Export: exp,
		Started: func(st *migrate.State, resumed bool) {
			if ex := st.Backfill.Export; ex != nil && ex.Import != nil {
				f.Audit.Act(audit.ActImportDestinations, opts.Source, map[string]any{"files": "s3://" + ex.Import.Bucket + "/" + ex.Import.Prefix, "destinations": l.Input.Routes.Tables(), "resumed": resumed})
			}
			if resumed {
				f.Audit.Act(audit.ActResumeBackfill, opts.Source, map[string]any{"position": st.Position, "segments": st.Backfill.Segments, "export": st.Backfill.Export})
				return
			}
			f.Audit.Act(audit.ActRecordStreamPosition, opts.Source, st.Position)
			if ex := st.Backfill.Export; ex != nil {
				f.Audit.Act(audit.ActReadExport, opts.Source, map[string]any{"export": ex.URI, "export_arn": ex.Arn, "export_time": ex.Time})
			}
		},
		LeftBehind: leftBehind(f),
		Progress: func(done, total int64, eta time.Duration) {
			pct := 0.0
			if total > 0 {
				pct = 100 * float64(done) / float64(total)
			}
			f.IOStreams.Progress("backfill %s: %d/%d items (%.0f%%), ETA %s%s", opts.Source, done, total, pct, eta.Round(time.Second), opts.Budgets.Status())
		},
	}
}

// shownLeftBehind is how many items of each kind left behind are named on
// stderr as they are met; the result counts them all and keeps a sample.
const shownLeftBehind = 10

// leftBehind names the first items of each kind the backfill leaves behind
// as it meets them (a long run from an export shows them early, not only
// in its result), and says once when it stops naming them.
func leftBehind(f *factory.Factory) func(kind, item string) {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(kind, item string) {
		mu.Lock()
		defer mu.Unlock()
		seen[kind]++
		switch n := seen[kind]; {
		case n <= shownLeftBehind:
			f.IOStreams.Notef("backfill: left behind (%s): %s\n", kind, item)
		case n == shownLeftBehind+1:
			f.IOStreams.Notef("backfill: more items left behind (%s): the result counts them all\n", kind)
		}
	}
}

// result is the command's result: the backfill, the Terraform entries of
// the destinations ImportTable created, and the capacity each table used.
type result struct {
	*migrate.BackfillResult
	Adopt    []*adopt.Result `json:"adopt,omitempty"`
	Capacity []capacity.Use  `json:"capacity"`
}

// show shows the result: print and printAdopt, or the JSON document.
func show(f *factory.Factory, r result) error {
	return view.Results(f, func(r result) error {
		print(f, r.BackfillResult)
		printAdopt(f, r.Adopt)
		return nil
	}).Show(r)
}

// adoptImported reads each destination created by import as dynops table
// adopt does: its tables.yaml entry and terraform import blocks.
func adoptImported(ctx context.Context, f *factory.Factory, res *migrate.BackfillResult) ([]*adopt.Result, error) {
	if res.Export == nil || res.Export.Import == nil {
		return nil, nil
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	// Each destination is read on its own (settings, auto scaling,
	// Contributor Insights): side by side, in the tables' order.
	tables := sortedKeys(res.Export.Import.Tables)
	out := make([]*adopt.Result, len(tables))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, table := range tables {
		g.Go(func() error {
			r, err := tableadopt.Read(gctx, clients, adopt.Options{Table: table})
			if err != nil {
				return fmt.Errorf("the destinations were created, but the Terraform entry of %s could not be built: %w; run `dynops table adopt --table TABLE` for each", table, err)
			}
			out[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		var done []*adopt.Result
		for _, r := range out {
			if r != nil {
				done = append(done, r)
			}
		}
		return done, err
	}
	return out, nil
}

func printAdopt(f *factory.Factory, results []*adopt.Result) {
	out := f.IOStreams.Out
	for _, r := range results {
		entry, err := tableadopt.Entry(r)
		if err != nil {
			fmt.Fprintf(out, "# %s: %v\n", r.Table, err)
			continue
		}
		fmt.Fprintf(out, "\n# envs/tables.yaml entry for %s (created by ImportTable): add it under the product's tables.\n%s", r.Table, entry)
		fmt.Fprintf(out, "\n# Terraform import blocks for %s (in the env root, e.g. adopt.tf; remove them after the apply):\n%s", r.Table, tableadopt.Imports(r))
		for _, w := range r.Warnings {
			fmt.Fprintf(out, "# warning: %s\n", w)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func print(f *factory.Factory, res *migrate.BackfillResult) {
	out := f.IOStreams.Out
	switch {
	case res.AlreadyDone:
		fmt.Fprintf(out, "The backfill of %s finished already (state %s): nothing to do. Next: dynops migrate catch-up.\n", res.Source, res.State)
	case res.Resumed:
		fmt.Fprintf(out, "Resumed and finished the backfill of %s: this run read %d items in %.1fs (%.0f items/s this run); %d items in all over %.1fs of runs (%.0f items/s overall)\n",
			res.Source, res.ReadThisRun, res.Seconds, res.ItemsPerSec, res.Read, res.ActiveSeconds, res.OverallItemsPerSec)
	default:
		fmt.Fprintf(out, "Backfilled %s: %d items read in %.1fs (%.0f items/s)\n", res.Source, res.ReadThisRun, res.Seconds, res.ItemsPerSec)
	}
	fmt.Fprintf(out, "Stream position recorded %s (%d shard(s)); state %s\n\n", res.Position.Time.Format(time.RFC3339), len(res.Position.Shards), res.State)
	tables := make([]string, 0, len(res.Written))
	for t := range res.Written {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var rows [][]string
	for _, t := range tables {
		rows = append(rows, []string{t, fmt.Sprint(res.Written[t])})
	}
	rows = append(rows, []string{"(unmatched, left behind)", fmt.Sprint(res.Unmatched)},
		[]string{"(untransformable, left behind)", fmt.Sprint(res.Untransformable)})
	_ = f.IOStreams.Table([]string{"DESTINATION", "ITEMS WRITTEN"}, rows)
	for _, k := range res.UnmatchedSample {
		fmt.Fprintf(out, "  unmatched: %s\n", k)
	}
	for _, k := range res.UntransformableSample {
		fmt.Fprintf(out, "  cannot transform: %s\n", k)
	}
	if res.Export != nil && res.Export.Import != nil {
		is := res.Export.Import
		fmt.Fprintf(out, "\n%d items read, %d written to per-destination files under s3://%s/%s/.\n", res.Read, res.WrittenTotal, is.Bucket, is.Prefix)
		for _, t := range sortedKeys(is.Tables) {
			it := is.Tables[t]
			fmt.Fprintf(out, "created %s by import %s: %s, %d items imported, %d errors (read back with DescribeImport)\n", t, it.ImportArn, it.Status, it.Imported, it.Errors)
			if b := it.ReadBack; b != nil {
				fmt.Fprintf(out, "  settings read back: PITR %v (%d days), deletion protection %v, TTL %q, stream %q, %d tag(s)\n",
					b.PITR, b.RecoveryPeriodInDays, b.DeletionProtection, b.TTLAttribute, b.StreamViewType, len(b.Tags))
			}
		}
		return
	}
	fmt.Fprintf(out, "\n%d items read, %d written.\n", res.Read, res.WrittenTotal)
}

// exportOptions are the export a backfill reads, when it reads one; a
// backfill that reads an export resumes with the export it recorded.
func exportOptions(ctx context.Context, f *factory.Factory, opts *Options) (*migrate.ExportOptions, error) {
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	s3 := func() (exportverify.S3API, error) { return clients.S3(), nil }
	o := &migrate.ExportOptions{URI: opts.FromExport, Parallel: opts.ExportParallel, Exports: clients.DynamoDB(),
		// The export must be of the source, as DynamoDB vouches for it.
		Open: func(ctx context.Context, uri string) (*exportverify.Export, error) {
			ex, err := exportverify.OpenExport(uri, s3)
			if err != nil {
				return nil, err
			}
			sourceArn, err := export.TableArn(ctx, clients.DynamoDB(), opts.Source)
			if err != nil {
				return nil, err
			}
			if _, _, err := exportshared.VouchExport(ctx, f, clients, ex, exportverify.Expect{TableArn: sourceArn}, opts.Unverified, opts.Source); err != nil {
				return nil, err
			}
			return ex, nil
		},
		Waiting: func(e export.Export, waited time.Duration) {
			f.IOStreams.Progress("waiting for the export %s of %s: %s for %s", e.Arn, opts.Source, e.Status, waited.Round(time.Second))
		}}
	if opts.ExportTo != "" {
		to, err := parseS3Target("--export-to", opts.ExportTo)
		if err != nil {
			return nil, err
		}
		o.To = &to
	}
	if opts.ImportTo != "" {
		to, err := parseS3Target("--import-to", opts.ImportTo)
		if err != nil {
			return nil, err
		}
		o.Import = &migrate.ImportOptions{To: to, DB: clients.DynamoDB(), S3: clients.S3(),
			Started: func(table string, i export.Import) {
				f.Audit.Act(audit.ActImportTable, table, map[string]any{"import_arn": i.Arn, "status": i.Status, "source": "s3://" + to.Bucket + "/" + to.Prefix + "/" + table + "/data/"})
			},
			Progress: func(table string, i export.Import) {
				f.IOStreams.Progress("import into %s: %s, %d items imported", table, i.Status, i.Imported)
			},
			Applied: func(table string, c tablesettings.Change) {
				f.Audit.Act(audit.ActApplySetting, table, c)
			}}
	}
	return o, nil
}

// parseS3Target reads --export-to s3://BUCKET/PREFIX.
func parseS3Target(flag, uri string) (export.Target, error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return export.Target{}, factory.UsageErrorf("%s %q: give s3://BUCKET/PREFIX", flag, uri)
	}
	return export.Target{Bucket: bucket, Prefix: strings.TrimSuffix(prefix, "/")}, nil
}
