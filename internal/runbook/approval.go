package runbook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Approval is a destructive step on protected targets waiting for (or
// given) the approval of callers other than the one who runs it. It is
// bound to the plan's SHA-256: the expanded command line and its dry-run
// output. A run whose plan changed needs a new approval.
type Approval struct {
	Step       string     `json:"step"`
	Plan       string     `json:"plan"` // the command line, then its dry-run output
	PlanSHA256 string     `json:"plan_sha256"`
	Requester  string     `json:"requester"` // STS caller ARN of the run
	Requested  time.Time  `json:"requested"`
	Expires    time.Time  `json:"expires"`
	Needed     int        `json:"needed"`
	Approvers  []Decision `json:"approvers,omitempty"`
	Rejected   *Decision  `json:"rejected,omitempty"`
	TimedOut   bool       `json:"timed_out,omitempty"`
}

// Decision is an approval or a rejection by one caller.
type Decision struct {
	Caller     string    `json:"caller"` // STS caller ARN
	At         time.Time `json:"at"`
	PlanSHA256 string    `json:"plan_sha256"`
	Reason     string    `json:"reason,omitempty"`
}

// PlanSHA256 is the hex SHA-256 of a plan.
func PlanSHA256(plan string) string {
	sum := sha256.Sum256([]byte(plan))
	return hex.EncodeToString(sum[:])
}

// Approved reports whether enough callers approved this plan.
func (a *Approval) Approved() bool {
	n := 0
	for _, d := range a.Approvers {
		if d.PlanSHA256 == a.PlanSHA256 {
			n++
		}
	}
	return a.Rejected == nil && !a.TimedOut && n >= a.Needed
}

// Waiting reports whether the request still waits for approvers.
func (a *Approval) Waiting(now time.Time) bool {
	return a.Rejected == nil && !a.TimedOut && !a.Approved() && now.Before(a.Expires)
}

// ApprovalError is an approval or rejection refused (exit 2).
type ApprovalError struct{ Err error }

func (e *ApprovalError) Error() string { return e.Err.Error() }
func (e *ApprovalError) Unwrap() error { return e.Err }

func (st *State) pending(step string) (*Approval, error) {
	a := st.Approvals[step]
	if a == nil {
		var waiting []string
		for s := range st.Approvals {
			waiting = append(waiting, s)
		}
		return nil, &ApprovalError{fmt.Errorf("incident %s, runbook %s: step %s has no approval request (requests: %v); the run asks for one when it reaches the step", st.Incident, st.Runbook, step, waiting)}
	}
	return a, nil
}

// Approve records caller's approval of the step's plan. The caller must not
// be the run's (a second person), the plan hash must be the one waiting,
// and the request must still wait.
func (st *State) Approve(step, planSHA, caller string, now time.Time) (*Approval, error) {
	a, err := st.pending(step)
	if err != nil {
		return nil, err
	}
	switch {
	case caller == "":
		return nil, &ApprovalError{fmt.Errorf("approving step %s: your STS caller ARN is unknown; an approval names who gave it", step)}
	case caller == a.Requester:
		return nil, &ApprovalError{fmt.Errorf("approving step %s of incident %s: you (%s) run it; a second approver must be another caller (another IAM user or role session)", step, st.Incident, caller)}
	case a.Rejected != nil:
		return nil, &ApprovalError{fmt.Errorf("approving step %s: %s rejected it at %s; the run must reach the step again for a new request", step, a.Rejected.Caller, a.Rejected.At.Format(time.RFC3339))}
	case a.TimedOut || !now.Before(a.Expires):
		return nil, &ApprovalError{fmt.Errorf("approving step %s: the request timed out at %s; the run must reach the step again for a new request", step, a.Expires.Format(time.RFC3339))}
	case planSHA != a.PlanSHA256:
		return nil, &ApprovalError{fmt.Errorf("approving step %s: --plan-sha256 %s is not the plan waiting (%s): read it with `dynops runbook status --incident %s` and approve that hash", step, planSHA, a.PlanSHA256, st.Incident)}
	}
	for _, d := range a.Approvers {
		if d.Caller == caller && d.PlanSHA256 == planSHA {
			return nil, &ApprovalError{fmt.Errorf("approving step %s: %s approved this plan already at %s", step, caller, d.At.Format(time.RFC3339))}
		}
	}
	a.Approvers = append(a.Approvers, Decision{Caller: caller, At: now, PlanSHA256: planSHA})
	return a, nil
}

// Reject records caller's rejection: the run stops at the step until it
// reaches it again (a new request).
func (st *State) Reject(step, caller, reason string, now time.Time) (*Approval, error) {
	a, err := st.pending(step)
	if err != nil {
		return nil, err
	}
	if a.Rejected != nil {
		return nil, &ApprovalError{fmt.Errorf("rejecting step %s: %s rejected it already", step, a.Rejected.Caller)}
	}
	a.Rejected = &Decision{Caller: caller, At: now, PlanSHA256: a.PlanSHA256, Reason: reason}
	return a, nil
}
