// Package backfill implements `dynops migrate backfill`.
package backfill

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate backfill`.
type Options struct {
	shared.Flags
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

Items no rule matches, and items their route cannot transform (a rename
onto an attribute the item already has), are counted, sampled and left
behind while the rest is written; at the end they fail the run (exit 1)
unless --allow-unmatched / --allow-untransformable. migrate plan finds both
before anything is written, and catch-up and verify treat them the same way.`,
		Example: `  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml
  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml --segments 8 --max-writes-per-second 2000
  dynops migrate backfill --source prod-aiagent-single --routes routes.yaml --export-to s3://prod-exports/migrate --confirm prod-aiagent-single`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if opts.FromExport != "" && opts.ExportTo != "" {
				return factory.UsageErrorf("--from-export and --export-to both given: read a finished export (--from-export) or start a new one (--export-to), not both")
			}
			if opts.ExportTo != "" {
				if _, err := parseS3Target(opts.ExportTo); err != nil {
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
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "leave items no rule matches behind instead of failing")
	fl.BoolVar(&opts.AllowUntransformable, "allow-untransformable", false, "leave items their route cannot transform behind instead of failing")
	fl.StringVar(&opts.FromExport, "from-export", "", "read this finished full export of the source (s3://BUCKET/PREFIX/AWSDynamoDB/EXPORT_ID or a local copy) instead of scanning it")
	fl.StringVar(&opts.ExportTo, "export-to", "", "start a point-in-time export of the source into s3://BUCKET/PREFIX and read it instead of scanning the source")
	fl.IntVar(&opts.ExportParallel, "export-parallel", 4, "export data files read at once (with --from-export or --export-to)")
	flagcheck.Range(fl, "export-parallel", "1", "1024", "export data files read at once")
	fl.BoolVar(&opts.Restart, "restart", false, "start a new backfill (new stream position) over a previous one; destinations must be empty")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "items copied so far stay written and the --state file records the position (and the export being read, which goes on in AWS if dynops started it); run the same backfill again with the same --state: it resumes there")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// Run runs (or resumes) the backfill.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, true)
	if err != nil {
		return err
	}
	if err := shared.ConfirmWrites(ctx, f, l, opts.Confirm); err != nil {
		return err
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	ios := f.IOStreams
	exp, err := exportOptions(ctx, f, opts)
	if err != nil {
		return err
	}
	res, err := migrate.Backfill(ctx, c, migrate.BackfillOptions{
		Input: l.Input, Segments: opts.Segments, Writers: opts.Writers, MaxWritesPerSecond: opts.MaxWritesPerSecond,
		AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable, Restart: opts.Restart, Now: f.Now,
		Export: exp,
		Started: func(st *migrate.State, resumed bool) {
			if resumed {
				f.Audit.Act(audit.ActResumeBackfill, opts.Source, map[string]any{"position": st.Position, "segments": st.Backfill.Segments, "export": st.Backfill.Export})
				return
			}
			f.Audit.Act(audit.ActRecordStreamPosition, opts.Source, st.Position)
			if ex := st.Backfill.Export; ex != nil {
				f.Audit.Act(audit.ActReadExport, opts.Source, map[string]any{"export": ex.URI, "export_arn": ex.Arn, "export_time": ex.Time})
			}
		},
		Progress: func(done, total int64, eta time.Duration) {
			pct := 0.0
			if total > 0 {
				pct = 100 * float64(done) / float64(total)
			}
			ios.Progress("backfill %s: %d/%d items (%.0f%%), ETA %s", opts.Source, done, total, pct, eta.Round(time.Second))
		},
	}, l.State)
	ios.Done()
	if err != nil && !migrate.LeftBehind(err) {
		return err
	}
	if !res.AlreadyDone {
		f.Audit.Act(audit.ActBackfillItems, opts.Source, map[string]any{"written": res.Written, "unmatched": res.Unmatched,
			"untransformable": res.Untransformable, "resumed": res.Resumed})
	}
	if f.JSON() {
		if perr := ios.PrintJSON(res); perr != nil {
			return perr
		}
	} else {
		print(f, res)
	}
	return err
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
	fmt.Fprintf(out, "\n%d items read, %d written.\n", res.Read, res.WrittenTotal)
}

// exportOptions are the export a backfill reads, when it reads one; a
// backfill that reads an export resumes with the export it recorded.
func exportOptions(ctx context.Context, f *factory.Factory, opts *Options) (*migrate.ExportOptions, error) {
	cfg, err := f.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	s3 := func() (exportverify.S3API, error) { return export.NewS3(cfg), nil }
	o := &migrate.ExportOptions{URI: opts.FromExport, Parallel: opts.ExportParallel, Exports: dynamodb.NewFromConfig(cfg),
		Open: func(uri string) (*exportverify.Export, error) { return exportverify.OpenExport(uri, s3) },
		Waiting: func(e export.Export, waited time.Duration) {
			f.IOStreams.Progress("waiting for the export %s of %s: %s for %s", e.Arn, opts.Source, e.Status, waited.Round(time.Second))
		}}
	if opts.ExportTo != "" {
		to, err := parseS3Target(opts.ExportTo)
		if err != nil {
			return nil, err
		}
		o.To = &to
	}
	return o, nil
}

// parseS3Target reads --export-to s3://BUCKET/PREFIX.
func parseS3Target(uri string) (export.Target, error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return export.Target{}, factory.UsageErrorf("--export-to %q: give s3://BUCKET/PREFIX, the bucket the source's export is written to", uri)
	}
	return export.Target{Bucket: bucket, Prefix: strings.TrimSuffix(prefix, "/")}, nil
}
