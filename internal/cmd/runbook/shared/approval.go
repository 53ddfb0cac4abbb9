package shared

import (
	"context"
	"fmt"
	"strings"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/runbook"
)

// ApprovalTarget names the request an approve or reject acts on.
type ApprovalTarget struct {
	StateBucket string
	Runbook     string // optional: the one runbook of the incident with a request for Step
	Step        string
}

// DecideApproval loads the incident's run state from the shared store,
// applies decide (an approval or rejection by the caller) and saves it
// conditionally (a run or another approver that wrote meanwhile makes it
// fail, nothing half-written). Bad input and refused decisions exit 2.
func DecideApproval(ctx context.Context, f *factory.Factory, t ApprovalTarget,
	decide func(st *runbook.State, caller string) (*runbook.Approval, error)) (*runbook.State, *runbook.Approval, error) {
	incident := f.Flags.Incident
	if incident == "" {
		return nil, nil, factory.UsageErrorf("give --incident ID (the incident of the run waiting for approval)")
	}
	if err := runbook.CheckIncident(incident); err != nil {
		return nil, nil, factory.UsageErrorf("--incident: %w", err)
	}
	if t.StateBucket == "" {
		return nil, nil, factory.UsageErrorf("give --state-bucket BUCKET[/PREFIX]: approvals live in the team's shared run state (the run's --state-bucket)")
	}
	store, err := Store(ctx, f, t.StateBucket)
	if err != nil {
		return nil, nil, err
	}
	s3store := store.(*runbook.S3Store)
	where := "s3://" + s3store.Bucket + "/" + s3store.Prefix + incident + "/"
	name := t.Runbook
	if name == "" {
		names, err := store.Runs(ctx, incident)
		if err != nil {
			return nil, nil, err
		}
		var with []string
		for _, n := range names {
			st, err := store.Load(ctx, incident, n)
			if err != nil {
				return nil, nil, err
			}
			if st != nil && st.Approvals[t.Step] != nil {
				with = append(with, n)
			}
		}
		switch len(with) {
		case 0:
			return nil, nil, factory.UsageErrorf("incident %s has no run waiting for approval of step %s in %s (runs: %s): check --incident, --step and --state-bucket", incident, t.Step, where, strings.Join(names, ", "))
		case 1:
			name = with[0]
		default:
			return nil, nil, factory.UsageErrorf("incident %s: runbooks %s all wait at step %s: name one with --runbook", incident, strings.Join(with, ", "), t.Step)
		}
	}
	st, err := store.Load(ctx, incident, name)
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		return nil, nil, factory.UsageErrorf("incident %s has no run of runbook %s in %s", incident, name, where)
	}
	a, err := decide(st, s3store.Caller)
	if err != nil {
		return nil, nil, factory.UsageErrorf("%w", err)
	}
	if err := store.Save(ctx, st); err != nil {
		return nil, nil, fmt.Errorf("recording the decision on step %s: %w", t.Step, err)
	}
	return st, a, nil
}
