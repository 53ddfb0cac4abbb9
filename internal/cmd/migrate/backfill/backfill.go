// Package backfill implements `dynops migrate backfill`.
package backfill

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate backfill`.
type Options struct {
	shared.Flags
	Confirm            []string
	Segments           int
	Writers            int
	MaxWritesPerSecond int
	AllowUnmatched     bool
	Restart            bool
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

Items no rule matches are counted and sampled; they fail the run (exit 1)
unless --allow-unmatched.`,
		Example: `  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml
  dynops migrate backfill --source dev-aiagent-single --routes routes.yaml --segments 8 --max-writes-per-second 2000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
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
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "leave items no rule matches behind instead of failing")
	fl.BoolVar(&opts.Restart, "restart", false, "start a new backfill (new stream position) over a previous one; destinations must be empty")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "items copied so far stay written and the --state file records the position; run the same backfill again with the same --state: it resumes there")
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
	res, err := migrate.Backfill(ctx, c, migrate.BackfillOptions{
		Input: l.Input, Segments: opts.Segments, Writers: opts.Writers, MaxWritesPerSecond: opts.MaxWritesPerSecond,
		AllowUnmatched: opts.AllowUnmatched, Restart: opts.Restart, Now: f.Now,
		Started: func(st *migrate.State, resumed bool) {
			if resumed {
				f.Audit.Act(audit.ActResumeBackfill, opts.Source, map[string]any{"position": st.Position, "segments": st.Backfill.Segments})
				return
			}
			f.Audit.Act(audit.ActRecordStreamPosition, opts.Source, st.Position)
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
	var unmatched *migrate.UnmatchedError
	if err != nil && !errors.As(err, &unmatched) {
		return err
	}
	if !res.AlreadyDone {
		f.Audit.Act(audit.ActBackfillItems, opts.Source, map[string]any{"written": res.Written, "unmatched": res.Unmatched, "resumed": res.Resumed})
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
		fmt.Fprintf(out, "Resumed and finished the backfill of %s in %.1fs (%.0f items/s this run)\n", res.Source, res.Seconds, res.ItemsPerSec)
	default:
		fmt.Fprintf(out, "Backfilled %s in %.1fs (%.0f items/s)\n", res.Source, res.Seconds, res.ItemsPerSec)
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
	rows = append(rows, []string{"(unmatched, left behind)", fmt.Sprint(res.Unmatched)})
	_ = f.IOStreams.Table([]string{"DESTINATION", "ITEMS WRITTEN"}, rows)
	for _, k := range res.UnmatchedSample {
		fmt.Fprintf(out, "  unmatched: %s\n", k)
	}
	fmt.Fprintf(out, "\n%d items read, %d written.\n", res.Read, res.WrittenTotal)
}
