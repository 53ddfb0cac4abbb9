// Package status implements `dynops pitr status`.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/pitrtime"
	"github.com/dynops/dynops/internal/restore"
)

// Options of `dynops pitr status`.
type Options struct {
	Tables []string
}

// NewCmdStatus returns `dynops pitr status`. runF replaces the run function in tests of flag parsing.
func NewCmdStatus(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "status --table NAME ...",
		Short: "Show point-in-time recovery state and the restorable window",
		Long: `Status shows, per table, whether point-in-time recovery is on (DDB-PITR-01),
its recovery period, and the earliest and latest time it can be restored to.`,
		Example: `  dynops pitr status --table prod-hoge-user
  dynops pitr status --table prod-hoge-user --table prod-hoge-order -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(opts.Tables) == 0 {
				return factory.UsageErrorf("pitr status needs --table NAME (e.g. --table prod-hoge-user)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringSliceVarP(&opts.Tables, "table", "t", nil, "table to show (repeatable)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTimeout(cmd, 15*time.Second)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

// Run prints the PITR state of each table.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	windows := make([]restore.Window, 0, len(opts.Tables))
	for _, t := range opts.Tables {
		w, err := restore.Status(ctx, db, t)
		if err != nil {
			return err
		}
		windows = append(windows, w)
	}
	return view.Results(f, func(windows []restore.Window) error { return showWindows(f, windows) }).Show(windows)
}

// showWindows is the human view: one row per table.
func showWindows(f *factory.Factory, windows []restore.Window) error {
	rows := make([][]string, 0, len(windows))
	for _, w := range windows {
		period := "-"
		if w.RecoveryPeriodInDays > 0 {
			period = fmt.Sprintf("%d days", w.RecoveryPeriodInDays)
		}
		rows = append(rows, []string{w.Table, w.Status, period, stamp(w.Earliest), stamp(w.Latest)})
	}
	return f.IOStreams.Table([]string{"TABLE", "PITR", "RECOVERY PERIOD", "EARLIEST RESTORABLE (UTC)", "LATEST RESTORABLE (UTC)"}, rows)
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return pitrtime.Format(*t)
}
