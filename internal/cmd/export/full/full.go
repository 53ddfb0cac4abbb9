// Package full implements `dynops export full`.
package full

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
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportwindow"
)

// Options of `dynops export full`.
type Options struct {
	Table  string
	Bucket string
	Prefix string
	Time   time.Time // zero: now
	Wait   bool
}

// NewCmdFull returns `dynops export full`. runF replaces Run in tests of flag parsing.
func NewCmdFull(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	var at string
	cmd := &cobra.Command{
		Use:   "full --table T --bucket B [--prefix P] [--time RFC3339] [--wait]",
		Short: "Export a whole table to S3 as of a point in time (needs PITR)",
		Long: `Full starts a full export of the table to S3 in DynamoDB JSON, as of --time
(default: now), which must lie in the table's PITR window. It reads from PITR:
no read capacity is used (DDB-EXP-01). With --wait it waits for the export.`,
		Example: `  dynops export full --table dev-hoge-user --bucket dev-hoge-exports --prefix manual --wait`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Table == "" || opts.Bucket == "" {
				return factory.UsageErrorf("export full needs --table NAME and --bucket BUCKET")
			}
			if at != "" {
				t, err := time.Parse(time.RFC3339, at)
				if err != nil {
					return factory.UsageErrorf("--time %q: use RFC3339, e.g. 2026-03-01T09:00:00Z", at)
				}
				opts.Time = t
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Table, "table", "t", "", "table to export")
	cmd.Flags().StringVar(&opts.Bucket, "bucket", "", "destination bucket (modules/dynamodb-export)")
	cmd.Flags().StringVar(&opts.Prefix, "prefix", "", "key prefix of the export in the bucket")
	cmd.Flags().StringVar(&at, "time", "", "export the table as of this time, RFC3339 (default: now)")
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the export completes (progress on a terminal)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "an export already started goes on in AWS; follow it with `dynops export list` and `dynops export wait ARN`")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "bucket")
	return cmd
}

// Run starts the export and prints it.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	tbl, err := export.DescribeTable(ctx, db, opts.Table)
	if err != nil {
		return err
	}
	if !opts.Time.IsZero() {
		if err := exportwindow.CheckRange(opts.Time, opts.Time, tbl.PITR); err != nil {
			return factory.UsageErrorf("--time: %v", err)
		}
	}
	if err := f.Audit.Start(ctx, audit.Plan{Targets: []string{opts.Table, "s3://" + opts.Bucket + "/" + opts.Prefix}, Counts: map[string]int64{"exports_to_start": 1}}); err != nil {
		return err
	}
	to := export.Target{Bucket: opts.Bucket, Prefix: opts.Prefix}
	// A run killed after its ExportTableToPointInTime (a runbook step
	// resumed) left an export in this very prefix: a second one would put
	// two exports side by side, which verify and import cannot tell apart.
	// It is taken as this run's instead.
	found, err := export.FindFull(ctx, db, tbl.Arn, to, opts.Time)
	if err != nil {
		return fmt.Errorf("looking for an export an earlier run started into s3://%s/%s: %w; nothing was started", opts.Bucket, opts.Prefix, err)
	}
	var e export.Export
	if found != nil {
		e = *found
		f.IOStreams.Infof("an export of %s into s3://%s/%s is already %s (%s, an earlier run's): taken as this run's instead of starting another\n", opts.Table, opts.Bucket, opts.Prefix, e.Status, e.Arn)
		f.Audit.Act(audit.ActExportFull, opts.Table, map[string]any{"export_arn": e.Arn, "bucket": opts.Bucket, "prefix": opts.Prefix, "time": opts.Time, "taken_over": "an export into this prefix, already " + e.Status + ", found with ListExports: taken as this run's instead of starting another"})
	} else {
		if e, err = export.StartFull(ctx, db, tbl.Arn, opts.Time, to, ""); err != nil {
			return err
		}
		f.Audit.Act(audit.ActExportFull, opts.Table, map[string]any{"export_arn": e.Arn, "bucket": opts.Bucket, "prefix": opts.Prefix, "time": opts.Time})
	}
	if opts.Wait {
		if e, err = shared.Wait(ctx, f, db, e.Arn); err != nil {
			_ = shared.PrintExports(f, []export.Export{e})
			return err
		}
	} else {
		back, err := export.Describe(ctx, db, e.Arn)
		if err != nil {
			return fmt.Errorf("reading back export %s: %w", e.Arn, err)
		}
		e = back
	}
	if err := shared.PrintExports(f, []export.Export{e}); err != nil {
		return err
	}
	if e.Status == exportwindow.Failed {
		// Already FAILED without --wait (e.g. the bucket refused it): say so in the exit code.
		return fmt.Errorf("%s: %w: %s", e.Arn, export.ErrExportFailed, e.Failure)
	}
	return nil
}
