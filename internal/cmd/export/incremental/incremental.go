// Package incremental implements `dynops export incremental`.
package incremental

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportwindow"
)

// Options of `dynops export incremental`.
type Options struct {
	Table           string
	Bucket          string
	Prefix          string
	From, To        time.Time
	SinceCheckpoint bool
	CheckpointTable string
	Wait            bool
}

// NewCmdIncremental returns `dynops export incremental`. runF replaces Run in tests of flag parsing.
func NewCmdIncremental(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	var from, to string
	cmd := &cobra.Command{
		Use:   "incremental --table T --bucket B (--from T1 --to T2 | --since-checkpoint --checkpoint-table C) [--wait]",
		Short: "Export the changes of a time range, in windows of 15 minutes to 24 hours",
		Long: `Incremental exports what changed in a table (NEW_AND_OLD_IMAGES) to S3.

With --from/--to the range is split into contiguous windows AWS accepts
(15 minutes to 24 hours each); the range must lie in the table's PITR window
(an end in the future is refused).

With --since-checkpoint it runs the same gap-free series as the scheduler of
modules/dynamodb-export, from the checkpoint kept in --checkpoint-table: the
first run is a full export (the baseline), later runs export the next window
from the checkpoint. The checkpoint moves only after a window COMPLETED; a
failed window is retried from the same checkpoint. Without --wait one step is
taken (account for the export in flight, start the next); with --wait it
catches up window by window until less than 15 minutes remain. Exports go to
PREFIX/full and PREFIX/incremental.`,
		Example: `  dynops export incremental --table dev-hoge-user --bucket dev-hoge-exports --from 2026-03-01T00:00:00Z --to 2026-03-03T06:00:00Z --wait
  dynops export incremental --table dev-hoge-user --bucket dev-hoge-exports --prefix scheduled/dev-hoge-user \
      --since-checkpoint --checkpoint-table dev-hoge-export-checkpoint --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Table == "" || opts.Bucket == "" {
				return factory.UsageErrorf("export incremental needs --table NAME and --bucket BUCKET")
			}
			ranged := from != "" || to != ""
			switch {
			case ranged && opts.SinceCheckpoint:
				return factory.UsageErrorf("give --from/--to or --since-checkpoint, not both")
			case !ranged && !opts.SinceCheckpoint:
				return factory.UsageErrorf("give --from T1 --to T2, or --since-checkpoint --checkpoint-table TABLE")
			case opts.SinceCheckpoint && opts.CheckpointTable == "":
				return factory.UsageErrorf("--since-checkpoint needs --checkpoint-table (the module output checkpoint_table_name)")
			case ranged:
				var err error
				if opts.From, err = parseTime("--from", from); err != nil {
					return err
				}
				if opts.To, err = parseTime("--to", to); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Table, "table", "t", "", "table to export")
	fl.StringVar(&opts.Bucket, "bucket", "", "destination bucket (modules/dynamodb-export)")
	fl.StringVar(&opts.Prefix, "prefix", "", "key prefix of the exports in the bucket")
	fl.StringVar(&from, "from", "", "start of the range, inclusive, RFC3339")
	fl.StringVar(&to, "to", "", "end of the range, exclusive, RFC3339")
	fl.BoolVar(&opts.SinceCheckpoint, "since-checkpoint", false, "continue the gap-free series from the stored checkpoint")
	fl.StringVar(&opts.CheckpointTable, "checkpoint-table", "", "DynamoDB table holding the series checkpoints")
	fl.BoolVar(&opts.Wait, "wait", false, "wait for each window to complete (progress on a terminal)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "an export already started goes on in AWS; the next run continues from the checkpoint")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "from", "to", "bucket")
	return cmd
}

func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, factory.UsageErrorf("%s is missing: --from and --to go together", flag)
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, factory.UsageErrorf("%s %q: use RFC3339, e.g. 2026-03-01T09:00:00Z", flag, v)
	}
	return t, nil
}

// Run exports the range, or steps the checkpointed series.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	if opts.SinceCheckpoint {
		return runSeries(ctx, f, db, opts)
	}
	tbl, err := export.DescribeTable(ctx, db, opts.Table)
	if err != nil {
		return err
	}
	if err := exportwindow.CheckRange(opts.From, opts.To, tbl.PITR); err != nil {
		return factory.UsageErrorf("--from/--to: %v", err)
	}
	windows, err := exportwindow.Split(opts.From, opts.To)
	if err != nil {
		return factory.UsageErrorf("--from/--to: %v", err)
	}
	target := export.Target{Bucket: opts.Bucket, Prefix: opts.Prefix}
	if err := f.Audit.Start(ctx, audit.Plan{Targets: []string{opts.Table, "s3://" + opts.Bucket + "/" + opts.Prefix}, Counts: map[string]int64{"exports_to_start": int64(len(windows))}}); err != nil {
		return err
	}
	var es []export.Export
	for i, w := range windows {
		f.IOStreams.Progress("window %d/%d %s", i+1, len(windows), w)
		e, err := export.StartIncremental(ctx, db, tbl.Arn, w, target, export.Token(tbl.Arn, w.String(), opts.Bucket, opts.Prefix))
		if err != nil {
			return err
		}
		f.Audit.Act(audit.ActExportIncremental, opts.Table, map[string]any{"export_arn": e.Arn, "from": w.From, "to": w.To, "bucket": opts.Bucket, "prefix": opts.Prefix})
		if opts.Wait {
			if e, err = shared.Wait(ctx, f, db, e.Arn); err != nil {
				_ = shared.PrintExports(f, append(es, e))
				return err
			}
		}
		es = append(es, e)
	}
	f.IOStreams.Done()
	return shared.PrintExports(f, es)
}

// maxFailures stops --wait from retrying a window that keeps failing.
const maxFailures = 3

func runSeries(ctx context.Context, f *factory.Factory, db export.SeriesDB, opts *Options) error {
	s := export.Series{DB: db, Checkpoints: export.CheckpointStore{DB: db, Table: opts.CheckpointTable},
		Table: opts.Table, Target: export.Target{Bucket: opts.Bucket, Prefix: opts.Prefix}, Now: f.Now}
	var steps []export.Outcome
	// A step may start an export and move the checkpoint: audited first.
	if err := f.Audit.Start(ctx, audit.Plan{Targets: []string{opts.Table, opts.CheckpointTable, "s3://" + opts.Bucket + "/" + opts.Prefix}}); err != nil {
		return err
	}
	for {
		out, err := s.Step(ctx)
		steps = append(steps, out)
		if out.Started != nil {
			f.Audit.Act(audit.ActExportSeriesStart, opts.Table, out.Started)
		}
		for _, c := range out.Completed {
			f.Audit.Act(audit.ActExportSeriesAdvance, opts.Table, map[string]any{"checkpoint": c.End(), "export_arn": c.ExportArn})
		}
		if err != nil {
			_ = printSteps(f, steps)
			return err
		}
		if !opts.Wait || out.State.InFlight == nil {
			break
		}
		if out.State.Failures >= maxFailures {
			_ = printSteps(f, steps)
			return fmt.Errorf("%s: the same window failed %d times in a row; see `dynops export status` of the failed exports and the runbook", opts.Table, out.State.Failures)
		}
		if _, err := shared.Wait(ctx, f, db, out.State.InFlight.ExportArn); err != nil {
			f.IOStreams.Infof("%v: the next step retries the window from the same checkpoint\n", err)
		}
	}
	return printSteps(f, steps)
}

// printSteps shows the series' steps: a table and the checkpoint, or the
// JSON document (a list).
func printSteps(f *factory.Factory, steps []export.Outcome) error {
	return view.Results(f, func(steps []export.Outcome) error { return stepsTable(f, steps) }).Show(steps)
}

// stepsTable is the human view of the steps: each decision, then the
// checkpoint and the lag after the last step.
func stepsTable(f *factory.Factory, steps []export.Outcome) error {
	var rows [][]string
	for _, s := range steps {
		for _, d := range s.Decisions {
			rows = append(rows, []string{s.Table, string(d.Action), d.Reason})
		}
	}
	if err := f.IOStreams.Table([]string{"TABLE", "ACTION", "DETAIL"}, rows); err != nil {
		return err
	}
	last := steps[len(steps)-1]
	cp := "none yet"
	if !last.State.Checkpoint.IsZero() {
		cp = last.State.Checkpoint.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(f.IOStreams.Out, "\ncheckpoint %s; lag %s\n", cp, last.Lag.Round(time.Second))
	return nil
}
