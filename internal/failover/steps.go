package failover

// The named steps of a failover or failback after the preflight, in order.

import (
	"context"
	"fmt"
	"strings"
)

// steps returns the steps after the preflight. A failover fences the old
// region and leaves the fence; a failback fences the region it leaves while
// the pointer moves, so that no two regions take writes at once, then removes
// every fence.
func (r *Runner) steps(req Request, s State, plan *DrainPlan) []stepDef {
	from, to := req.Rules.From, req.Rules.To
	fromState, _ := s.Region(from)
	toState, _ := s.Region(to)
	table := req.Target.Table
	exempt := "the replication role"
	if req.BreakGlassRoleARN != "" {
		exempt = req.BreakGlassRoleARN + " and the replication role"
	}
	// A failback's fence is temporary (removed by its last step): its own
	// Sid shows one left in place by a failback that did not finish.
	sid := FenceSid
	if req.Rules.Mode == Failback {
		sid = FailbackFenceSid
	}
	if plan == nil {
		plan = &DrainPlan{Rule: DrainNotComputed}
	}
	d := &drainRun{plan: *plan}
	defs := []stepDef{{
		name: "drain-canary",
		plan: fmt.Sprintf("write the drain canary (%s) in %s just before the fence; after the drain it must be readable in %s", drainCanaryKey, from, to),
		run: func(ctx context.Context, st *Step) error {
			return r.drainCanary(ctx, st, req, fromState, d)
		},
	}, {
		name: "fence-old",
		plan: fmt.Sprintf("deny %s on %s in %s to every principal but %s (resource policy statement %s)", strings.Join(FencedActions(req.BreakGlassRoleARN), ", "), table, from, exempt, sid),
		run: func(ctx context.Context, st *Step) error {
			if !fromState.Answers {
				st.Status = StepSkipped
				st.Detail = fmt.Sprintf("%s does not answer (--force): NOT fenced; when it answers again, run `dynops dr failover %s --to %s --from %s --yes` again to fence it and set its pointer", from, commonFlags(req), to, from)
				return nil
			}
			return r.fence(ctx, st, from, fromState.TableARN, req.BreakGlassRoleARN, sid)
		},
	}}
	if others := othersOf(req.Target, from, to); len(others) > 0 {
		defs = append(defs, stepDef{
			name: "fence-others",
			plan: fmt.Sprintf("fence %s in %s too (the other replicas: only %s takes writes after the switch), same statement %s, each read back", table, strings.Join(others, ", "), to, sid),
			run: func(ctx context.Context, st *Step) error {
				return r.fenceOthers(ctx, st, req, s, others, sid)
			},
		})
	}
	if req.Rules.Mode == Failback {
		defs = append(defs, stepDef{
			name: "unfence-target",
			plan: fmt.Sprintf("remove the write fence from %s in %s", table, to),
			run: func(ctx context.Context, st *Step) error {
				return r.unfence(ctx, st, to, toState.TableARN, req.BreakGlassRoleARN)
			},
		})
	}
	defs = append(defs,
		stepDef{
			name: "drain",
			plan: plan.Detail,
			data: plan,
			run: func(ctx context.Context, st *Step) error {
				if req.Rules.Resume {
					st.Status, st.Detail = StepSkipped, fmt.Sprintf("the pointer already names %s: the run that flipped it had drained %s", to, from)
					return nil
				}
				return r.drain(ctx, st, d.plan, d.since)
			},
		},
		stepDef{
			name: "drain-check",
			plan: fmt.Sprintf("read the drain canary in %s (strongly consistent): what %s took before the fence has replicated; then delete it", to, from),
			run: func(ctx context.Context, st *Step) error {
				return r.drainCheck(ctx, st, req, s, d)
			},
		},
		stepDef{
			name: "flip-pointer",
			plan: fmt.Sprintf("set %s to %s in %s", req.Target.Pointer, to, strings.Join(req.Target.Regions, ", ")),
			run: func(ctx context.Context, st *Step) error {
				return r.flipPointer(ctx, st, req, s)
			},
		},
		stepDef{
			name: "route53",
			plan: r.route53Plan(req),
			run: func(ctx context.Context, st *Step) error {
				return r.flipHealthChecks(ctx, st, req)
			},
		},
	)
	c, canaryErr := newCanary(toState.HashKey, toState.RangeKey, fmt.Sprintf("%s-%d", req.Rules.Mode, r.Now().UnixNano()))
	defs = append(defs,
		stepDef{
			name: "canary",
			plan: fmt.Sprintf("write a canary item in %s and read it back (strongly consistent)", to),
			run: func(ctx context.Context, st *Step) error {
				if canaryErr != nil {
					return canaryErr
				}
				db := r.Clients(to).DynamoDB
				if err := c.write(ctx, db, table, r.Now()); err != nil {
					return err
				}
				st.Undo = []string{fmt.Sprintf("aws dynamodb delete-item --region %s --table-name %s --key '%s' (or let it expire: ttl is one hour)", to, table, c.describe())}
				ok, err := c.read(ctx, db, table, true)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("canary %s written in %s but not read back", c.describe(), to)
				}
				st.Detail = fmt.Sprintf("canary %s written in %s and read back", c.describe(), to)
				return nil
			},
		},
		stepDef{
			name: "replication-check",
			plan: fmt.Sprintf("wait up to %s for the canary to replicate to %s, then delete it", req.ReplicationTimeout, from),
			run: func(ctx context.Context, st *Step) error {
				return r.replicationCheck(ctx, st, req, s, c)
			},
		},
	)
	if req.Rules.Mode == Failback {
		left := append([]string{from}, othersOf(req.Target, from, to)...)
		defs = append(defs, stepDef{
			name: "unfence-old",
			plan: fmt.Sprintf("remove the write fences of dynops dr from %s in %s (any other owner's fence stays), each read back", table, strings.Join(left, ", ")),
			run: func(ctx context.Context, st *Step) error {
				return r.unfenceAll(ctx, st, req, s, left)
			},
		})
	}
	return defs
}
