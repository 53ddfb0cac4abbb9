package runbook

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynops/dynops/internal/notify"
)

// gates are what a confirmed destructive step on protected targets passes
// before it runs: its env's destructive-run cap (checked first, taken
// last, so that a run over the cap asks nobody to approve) and the approval
// of other callers. Break-glass skips both, each skip recorded and notified.
func (r *Runner) gates(ctx context.Context, rb *Runbook, st *State, step Step, args []string) error {
	capped := r.Cap > 0 && r.Counter != nil
	if capped && r.BreakGlass == "" {
		used, err := r.Counter.DestructiveRuns(ctx, r.Env, r.Cap)
		if err != nil {
			return err
		}
		if len(used) >= r.Cap {
			return r.capReached(ctx, rb, &CapError{Step: step.ID, Env: r.Env, Limit: r.Cap, Used: used})
		}
	}
	if need := r.approvalsFor(step.ID); need > 0 {
		if r.BreakGlass != "" {
			if st.Approvals[step.ID] != nil { // a request waiting from an earlier run: nobody needs to answer it now
				delete(st.Approvals, step.ID)
				if err := r.Store.Save(ctx, st); err != nil {
					return err
				}
			}
			r.brokeGlass(ctx, rb, step.ID, "approval", fmt.Sprintf("break-glass: the approval of %d other caller(s) skipped (%s)", need, r.BreakGlass))
		} else if err := r.approved(ctx, rb, st, step, args, need); err != nil {
			return err
		}
	}
	if !capped {
		return nil
	}
	if r.BreakGlass != "" {
		r.brokeGlass(ctx, rb, step.ID, "cap", fmt.Sprintf("break-glass: the cap of %d destructive run(s) per hour in %s lifted (%s)", r.Cap, r.Env, r.BreakGlass))
		return nil
	}
	err := r.Counter.ClaimDestructiveRun(ctx, r.Cap, DestructiveRun{Env: r.Env, Incident: r.Incident, Runbook: rb.Name, Step: step.ID, Caller: r.Caller})
	var ce *CapError
	if errors.As(err, &ce) {
		return r.capReached(ctx, rb, ce)
	}
	return err
}

func (r *Runner) capReached(ctx context.Context, rb *Runbook, ce *CapError) error {
	ce.From = r.CapFrom
	r.notify(ctx, rb, notify.CapReached, ce.Step, fmt.Sprintf("stopped: the cap of %d destructive run(s) per hour in %s is reached", ce.Limit, ce.Env))
	return ce
}

func (r *Runner) brokeGlass(ctx context.Context, rb *Runbook, step, gate, text string) {
	fmt.Fprintf(r.ErrOut, "   %s\n", text)
	if r.BrokeGlass != nil {
		r.BrokeGlass(step, gate)
	}
	r.notify(ctx, rb, notify.BreakGlass, step, text)
}

// approvalsFor is how many other callers must approve step: its own
// setting, else the run's.
func (r *Runner) approvalsFor(step string) int {
	if n, ok := r.StepApprovals[step]; ok {
		return n
	}
	return r.Approvals
}

// notify tells the Notifier an event of the run.
func (r *Runner) notify(ctx context.Context, rb *Runbook, kind, step, text string) {
	if r.Notifier == nil {
		return
	}
	r.Notifier.Notify(ctx, notify.Event{Type: kind, Incident: r.Incident, Runbook: rb.Name, Step: step, Text: text, At: r.Now().UTC()})
}

// approvalNotice is the notification of an approval event.
func approvalNotice(event string, a *Approval) (kind, text string) {
	switch event {
	case "approval-requested":
		return notify.ApprovalWaiting, fmt.Sprintf("waiting for %d approval(s) of plan sha256 %s by another caller, until %s", a.Needed, a.PlanSHA256, a.Expires.Format("2006-01-02T15:04:05Z07:00"))
	case "approval-used":
		return notify.ApprovalUsed, fmt.Sprintf("plan sha256 %s approved by %s: running", a.PlanSHA256, approvers(a))
	case "rejected":
		return notify.ApprovalRejected, fmt.Sprintf("plan rejected by %s (%s): stopped", a.Rejected.Caller, orDash(a.Rejected.Reason))
	default:
		return notify.ApprovalTimedOut, fmt.Sprintf("approval request timed out with %d of %d: stopped", len(a.Approvers), a.Needed)
	}
}
