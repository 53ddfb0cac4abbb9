// Package status is `dynops runbook status`.
package status

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/runbook/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/runbook"
)

// Options are the flags of `dynops runbook status`.
type Options struct {
	StateBucket string
}

// Run is one runbook run of the incident, as `status` reports it.
type Run struct {
	Incident string         `json:"incident"`
	Runbook  string         `json:"runbook"`
	Started  string         `json:"started"`
	Done     []string       `json:"done"`
	Current  string         `json:"current,omitempty"`
	Holder   *runbook.Lease `json:"holder,omitempty"` // the lease, active or not
	Held     bool           `json:"held"`             // the lease is active now
	Updated  time.Time      `json:"updated"`
	// Approvals are the steps' approval requests (the plan, its hash, who approved).
	Approvals map[string]*runbook.Approval `json:"approvals,omitempty"`
	// Ended is how its last run ended; Task the ECS task it was last
	// started in (`runbook run --in-aws`).
	Ended *runbook.Ended `json:"ended,omitempty"`
	Task  *runbook.Task  `json:"task,omitempty"`
}

// Status is the output of `dynops runbook status`.
type Status struct {
	Incident string `json:"incident"`
	Where    string `json:"where"`
	Runs     []Run  `json:"runs"`
}

// NewCmdStatus returns `dynops runbook status --incident ID`.
func NewCmdStatus(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "status --incident ID",
		Short: "Show an incident's runbook runs: steps done, the current step and who holds the run",
		Long: `Status reads the incident's runbook states (the team's --state-bucket, or the
local directory next to the audit log) and prints, per runbook, the steps done,
the step running or stopped at, and the holder of the run (its STS caller ARN
and lease expiry). It changes nothing: read access to the state prefix is enough.`,
		Example: `  dynops runbook status --incident INC-1234 --state-bucket acme-oncall
  dynops runbook status --incident INC-1234 --state-bucket acme-oncall -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunStatus(cmd.Context(), f, opts)
		},
	}
	shared.AddStateBucketFlag(cmd.Flags(), &opts.StateBucket)
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd)
	return cmd
}

// RunStatus prints the incident's runs.
func RunStatus(ctx context.Context, f *factory.Factory, opts *Options) error {
	incident := f.Flags.Incident
	if incident == "" {
		return factory.UsageErrorf("runbook status: give --incident ID (the id `dynops runbook run` printed, or DYNOPS_INCIDENT)")
	}
	if err := runbook.CheckIncident(incident); err != nil {
		return factory.UsageErrorf("--incident: %w", err)
	}
	store, err := shared.Store(ctx, f, opts.StateBucket)
	if err != nil {
		return err
	}
	now := f.Now()
	out, err := read(ctx, store, incident, now)
	if err != nil {
		return err
	}
	return show(f, out, now)
}

// read reads the incident's runs from the store: each run's state, the
// holder of its lease and (in S3) the ECS task it was last started in. An
// incident without runs is a usage error naming where dynops looked.
func read(ctx context.Context, store runbook.Store, incident string, now time.Time) (Status, error) {
	where := "the local directory next to the audit log"
	if s, ok := store.(*runbook.S3Store); ok {
		where = "s3://" + s.Bucket + "/" + s.Prefix + incident + "/"
	} else if fs, ok := store.(runbook.FileStore); ok {
		where = fs.Dir
	}
	names, err := store.Runs(ctx, incident)
	if err != nil {
		return Status{}, err
	}
	if len(names) == 0 {
		return Status{}, factory.UsageErrorf("incident %s has no runbook run in %s: check --incident and --state-bucket (a run started with --state-bucket is only there)", incident, where)
	}
	out := Status{Incident: incident, Where: where}
	for _, name := range names {
		st, err := store.Load(ctx, incident, name)
		if err != nil {
			return Status{}, err
		}
		if st == nil {
			continue
		}
		l, err := store.Holder(ctx, incident, name)
		if err != nil {
			return Status{}, err
		}
		done := st.Done
		if done == nil {
			done = []string{}
		}
		run := Run{Incident: incident, Runbook: name, Started: st.Started, Done: done, Current: st.Current,
			Holder: l, Held: l.Active(now), Updated: st.Updated, Approvals: st.Approvals, Ended: st.Ended}
		if s, ok := store.(*runbook.S3Store); ok {
			if run.Task, err = s.LoadTask(ctx, incident, name); err != nil {
				return Status{}, err
			}
		}
		out.Runs = append(out.Runs, run)
	}
	return out, nil
}

// show shows the status: showRuns' lines, or the JSON document.
func show(f *factory.Factory, out Status, now time.Time) error {
	return view.Results(f, func(out Status) error { showRuns(f.IOStreams.Out, out, now); return nil }).Show(out)
}

// showRuns is the human view: per run, the steps done, the current one, its
// task, how it ended, the holder and each approval request with its plan.
func showRuns(w io.Writer, out Status, now time.Time) {
	fmt.Fprintf(w, "Incident %s (%s)\n", out.Incident, out.Where)
	for _, r := range out.Runs {
		fmt.Fprintf(w, "\n%s (started %s)\n  done:    %s\n", r.Runbook, r.Started, orNone(strings.Join(r.Done, ", ")))
		fmt.Fprintf(w, "  current: %s\n", orNone(r.Current))
		if r.Task != nil {
			fmt.Fprintf(w, "  task:    %s (started by %s at %s)\n", r.Task.ARN, r.Task.StartedBy, r.Task.Started.Format(time.RFC3339))
		}
		if r.Ended != nil {
			fmt.Fprintf(w, "  ended:   exit %d at %s: %s\n", r.Ended.Code, r.Ended.At.Format(time.RFC3339), r.Ended.Why)
		}
		switch {
		case r.Held:
			fmt.Fprintf(w, "  holder:  %s (host %s, until %s)\n", r.Holder.Holder, r.Holder.Host, r.Holder.Expires.Format(time.RFC3339))
		case r.Holder != nil:
			fmt.Fprintf(w, "  holder:  none (last: %s, released or expired %s)\n", r.Holder.Holder, r.Holder.Expires.Format(time.RFC3339))
		default:
			fmt.Fprintf(w, "  holder:  none\n")
		}
		for _, a := range r.Approvals {
			state := fmt.Sprintf("waiting for %d approval(s) by another caller than %s, until %s", a.Needed, a.Requester, a.Expires.Format(time.RFC3339))
			switch {
			case a.Rejected != nil:
				state = "rejected by " + a.Rejected.Caller + ": " + a.Rejected.Reason
			case a.Approved():
				state = "approved"
			case !a.Waiting(now):
				state = "timed out"
			}
			fmt.Fprintf(w, "  approval of step %s: %s (%d given)\n  plan sha256 %s:\n    %s\n", a.Step, state, len(a.Approvers), a.PlanSHA256,
				strings.ReplaceAll(strings.TrimSpace(a.Plan), "\n", "\n    "))
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
