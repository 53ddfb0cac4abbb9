// Package log is `dynops audit log`: the runs in the audit log.
package log

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/view"
)

// Options are the flags of `dynops audit log`.
type Options struct {
	Incident string
	Since    time.Duration
}

// NewCmdLog returns `dynops audit log`.
func NewCmdLog(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List the runs in the audit log (interrupted ones included)",
		Example: `  dynops audit log --since 2h
  dynops audit log --incident INC-1234 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Incident = f.Flags.Incident // the global --incident (or DYNOPS_INCIDENT) selects
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Since, "since", 0, "only the runs started in this last period, e.g. 2h or 2d")
	flagcheck.Range(cmd.Flags(), "since", "0s", "", "0: every run")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}

// Load reads the runs of the audit log selected by incident and since.
func Load(f *factory.Factory, incident string, since time.Duration) ([]audit.Run, error) {
	path := f.Audit.Path()
	recs, err := audit.Read(path)
	if err != nil {
		return nil, fmt.Errorf("%w (the log is --audit-log, DYNOPS_AUDIT_LOG or $XDG_STATE_HOME/dynops/audit.jsonl)", err)
	}
	flt := audit.Filter{Incident: incident}
	if since > 0 {
		flt.Since = f.Now().Add(-since)
	}
	runs := flt.Select(audit.Runs(recs))
	host, _ := os.Hostname()
	audit.MarkRunning(runs, host, audit.DynopsAlive)
	return runs, nil
}

// Run lists the runs.
func Run(_ context.Context, f *factory.Factory, opts *Options) error {
	runs, err := Load(f, opts.Incident, opts.Since)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []audit.Run{}
	}
	return view.Results(f, func(runs []audit.Run) error { return showRuns(f, runs) }).Show(runs)
}

// showRuns is the human view: one row per run.
func showRuns(f *factory.Factory, runs []audit.Run) error {
	rows := make([][]string, 0, len(runs))
	for _, r := range runs {
		res := r.Result
		if !r.Finished() {
			res = strings.ToUpper(res)
		}
		if r.ExitCode != nil {
			res += fmt.Sprintf(" (exit %d)", *r.ExitCode)
		}
		cmd := r.Command
		if r.Step != "" {
			cmd += " [" + r.Runbook + "/" + r.Step + "]"
		}
		rows = append(rows, []string{r.Time.UTC().Format(time.RFC3339), r.RunID, orDash(r.Incident), r.Who(), cmd,
			orDash(strings.Join(r.Targets, ",")), res, orDash(r.Changed())})
	}
	if len(rows) == 0 {
		fmt.Fprintf(f.IOStreams.Out, "No runs in %s match.\n", f.Audit.Path())
		return nil
	}
	return f.IOStreams.Table([]string{"STARTED", "RUN", "INCIDENT", "WHO", "COMMAND", "TARGETS", "RESULT", "CHANGED"}, rows)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
