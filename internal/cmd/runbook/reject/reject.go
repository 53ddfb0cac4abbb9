// Package reject is `dynops runbook reject`.
package reject

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

// Options are the flags of `dynops runbook reject`.
type Options struct {
	shared.ApprovalTarget
	Reason string
}

// NewCmdReject returns `dynops runbook reject`.
func NewCmdReject(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "reject --incident ID --step STEP --reason TEXT",
		Short: "Reject the plan of a runbook step waiting for approval: the run stops at the step",
		Long: `Reject records, under your STS caller ARN and with a reason, that the plan of a
step waiting for approval must not run. The run stops there when run again
(exit 5, audited); running it once more asks for a new approval.`,
		Example: `  dynops runbook reject --incident INC-1234 --step restore --reason "wrong restore point" --state-bucket acme-oncall`,
		Args:    cobra.NoArgs,
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
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why (in the shared state and the audit)")
	_ = cmd.MarkFlagRequired("step")
	_ = cmd.MarkFlagRequired("reason")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the rejection is recorded only if this command said so; run `dynops runbook status` to see")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "step")
	return cmd
}

// Run records the rejection.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	st, a, err := shared.DecideApproval(ctx, f, opts.ApprovalTarget, func(st *runbook.State, caller string) (*runbook.Approval, error) {
		return st.Reject(opts.Step, caller, opts.Reason, f.Now().UTC())
	})
	if err != nil {
		return err
	}
	f.Audit.SetTags(audit.Tags{Incident: st.Incident, Runbook: st.Runbook, Step: opts.Step})
	f.Audit.Act(audit.ActRunbookReject, opts.Step, map[string]any{"plan_sha256": a.PlanSHA256, "requester": a.Requester, "rejected": a.Rejected})
	shared.NotifyDecision(ctx, f, st, notify.Rejected, opts.Step, fmt.Sprintf("plan sha256 %s rejected by %s (%s)", a.PlanSHA256, a.Rejected.Caller, opts.Reason))
	return show(f, st, opts.Step, a)
}

// show shows the rejection: a line on stderr, or the JSON document.
func show(f *factory.Factory, st *runbook.State, step string, a *runbook.Approval) error {
	return view.Results(f, func(*runbook.Approval) error {
		fmt.Fprintf(f.IOStreams.ErrOut, "Rejected step %s of %s (incident %s): the run stops at it.\n", step, st.Runbook, st.Incident)
		return nil
	}).Show(a)
}
