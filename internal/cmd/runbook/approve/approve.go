// Package approve is `dynops runbook approve`.
package approve

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/runbook/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/notify"
	"github.com/dynops/dynops/internal/runbook"
)

// Options are the flags of `dynops runbook approve`.
type Options struct {
	shared.ApprovalTarget
	PlanSHA256 string
}

// NewCmdApprove returns `dynops runbook approve`.
func NewCmdApprove(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "approve --incident ID --step STEP --plan-sha256 HASH",
		Short: "Approve the plan of a runbook step waiting for a second approver (another caller than the run's)",
		Long: `A run with --approvals N stops before each destructive step on protected targets,
printing the step's plan (its command line and dry-run output) and the plan's
SHA-256. Approve records your approval of that hash in the team's shared run
state, under your STS caller ARN: it is refused for the caller who runs the
step, for another hash, and after the request timed out or was rejected. The
run goes on when it is run again and its plan still has the approved hash.`,
		Example: `  dynops runbook status --incident INC-1234 --state-bucket acme-oncall
  dynops runbook approve --incident INC-1234 --step restore --plan-sha256 3b1f... --state-bucket acme-oncall`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddStateBucketFlag(cmd.Flags(), &opts.StateBucket)
	cmd.Flags().StringVar(&opts.Runbook, "runbook", "", "the runbook of the run (needed only when several runs of the incident wait at this step)")
	cmd.Flags().StringVar(&opts.Step, "step", "", "the step waiting for approval")
	cmd.Flags().StringVar(&opts.PlanSHA256, "plan-sha256", "", "the SHA-256 of the plan you read (printed by the run and by `runbook status`)")
	_ = cmd.MarkFlagRequired("step")
	_ = cmd.MarkFlagRequired("plan-sha256")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the approval is recorded only if this command said so; run `dynops runbook status` to see, and approve again if it is not")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "step")
	return cmd
}

// Run records the approval.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	st, a, err := shared.DecideApproval(ctx, f, opts.ApprovalTarget, func(st *runbook.State, caller string) (*runbook.Approval, error) {
		return st.Approve(opts.Step, opts.PlanSHA256, caller, f.Now().UTC())
	})
	if err != nil {
		return err
	}
	f.Audit.SetTags(audit.Tags{Incident: st.Incident, Runbook: st.Runbook, Step: opts.Step})
	f.Audit.Act(audit.ActRunbookApprove, opts.Step, map[string]any{"plan_sha256": a.PlanSHA256, "requester": a.Requester, "approvers": a.Approvers, "needed": a.Needed})
	shared.NotifyDecision(ctx, f, st, notify.Approved, opts.Step, fmt.Sprintf("plan sha256 %s approved by %s (%d of %d)", a.PlanSHA256, a.Approvers[len(a.Approvers)-1].Caller, len(a.Approvers), a.Needed))
	return show(f, st, opts.Step, a)
}

// show shows the approval: a line on stderr, or the JSON document.
func show(f *factory.Factory, st *runbook.State, step string, a *runbook.Approval) error {
	return view.Results(f, func(a *runbook.Approval) error {
		fmt.Fprintf(f.IOStreams.ErrOut, "Approved step %s of %s (incident %s), plan sha256 %s: %d of %d approval(s). The run goes on when `dynops runbook run %s --incident %s` is run again.\n",
			step, st.Runbook, st.Incident, a.PlanSHA256, len(a.Approvers), a.Needed, st.Runbook, st.Incident)
		return nil
	}).Show(a)
}
