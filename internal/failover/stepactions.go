package failover

// What the steps do: fence and unfence replicas, flip the pointer and the
// Route 53 health checks, check replication with the canary.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/dynops/dynops/internal/poll"
)

func (r *Runner) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return 2 * time.Second
}

// fence is FenceTable as a step of the switch: its undo restores the policy before.
func (r *Runner) fence(ctx context.Context, st *Step, region, arn, breakGlass, sid string) error {
	before, detail, changed, err := fenceTable(ctx, r.Clients(region).DynamoDB, arn, breakGlass, sid, r.pollInterval())
	if changed {
		st.Undo = []string{restorePolicyCmd(region, arn, before)}
	}
	if err != nil {
		return err
	}
	st.Detail = detail
	return nil
}

// fenceOthers fences every replica of a switch but its old region (fenced
// by fence-old) and its target, one by one, each read back. A replica
// fenced already (by dynops dr or a migration) is left as it is; one that
// does not answer is skipped only with --force (the preflight refused
// otherwise), and the detail says it is NOT fenced.
func (r *Runner) fenceOthers(ctx context.Context, st *Step, req Request, s State, others []string, sid string) error {
	var done []string
	for _, region := range others {
		rs, _ := s.Region(region)
		switch {
		case rs.Fenced:
			done = append(done, fmt.Sprintf("%s: fenced already (statement %s), left as it is", region, rs.FenceSid))
			continue
		case !rs.Answers && req.Rules.Force:
			done = append(done, fmt.Sprintf("%s: does not answer (--force): NOT fenced; when it answers, run `dynops dr failover %s --to %s --from %s --yes` again to fence it", region, commonFlags(req), req.Rules.To, req.Rules.From))
			continue
		case !rs.Answers || !rs.TableExists:
			return fmt.Errorf("%s cannot be fenced: %s (fenced so far: %v)", region, rs.Error, done)
		}
		before, detail, changed, err := fenceTable(ctx, r.Clients(region).DynamoDB, rs.TableARN, req.BreakGlassRoleARN, sid, r.pollInterval())
		if changed {
			st.Undo = append(st.Undo, restorePolicyCmd(region, rs.TableARN, before))
		}
		if err != nil {
			return fmt.Errorf("fencing %s in %s: %w (fenced so far: %v)", req.Target.Table, region, err, done)
		}
		done = append(done, region+": "+detail)
	}
	st.Detail = strings.Join(done, "; ")
	return nil
}

// unfenceAll removes the fences of dynops dr from every region in regions,
// each read back; another owner's fence (a migration's) stays and the
// detail says so. A region that does not answer is skipped with --force.
func (r *Runner) unfenceAll(ctx context.Context, st *Step, req Request, s State, regions []string) error {
	var details []string
	removed := 0
	for _, region := range regions {
		rs, _ := s.Region(region)
		switch {
		case !rs.Answers:
			details = append(details, fmt.Sprintf("%s: does not answer (--force): any fence of dynops dr there stays; run the same failback again when it answers", region))
			continue
		case !rs.TableExists:
			details = append(details, fmt.Sprintf("%s: %s", region, rs.Error))
			continue
		}
		had, before, detail, err := unfenceTable(ctx, r.Clients(region).DynamoDB, rs.TableARN, OwnerDR, req.BreakGlassRoleARN, r.pollInterval())
		if err != nil {
			return fmt.Errorf("unfencing %s in %s: %w (done so far: %s)", req.Target.Table, region, err, strings.Join(details, "; "))
		}
		if had {
			removed++
			st.Undo = append(st.Undo, restorePolicyCmd(region, rs.TableARN, before))
		}
		details = append(details, region+": "+detail)
	}
	if removed == 0 {
		st.Status = StepSkipped
	}
	st.Detail = strings.Join(details, "; ")
	return nil
}

// unfence removes the fence statement dynops wrote, over the revision it
// read, and reads back until the table is no longer fenced by any statement.
func (r *Runner) unfence(ctx context.Context, st *Step, region, arn, breakGlass string) error {
	had, before, detail, err := unfenceTable(ctx, r.Clients(region).DynamoDB, arn, OwnerDR, breakGlass, r.pollInterval())
	if err != nil {
		return err
	}
	if !had {
		st.Status, st.Detail = StepSkipped, detail
		return nil
	}
	st.Undo = []string{restorePolicyCmd(region, arn, before)}
	st.Detail = detail
	return nil
}

func policySummary(doc string) string {
	if doc == "" {
		return "no resource policy left"
	}
	return fmt.Sprintf("%d bytes of policy left", len(doc))
}

func restorePolicyCmd(region, arn, doc string) string {
	if doc == "" {
		return fmt.Sprintf("aws dynamodb delete-resource-policy --region %s --resource-arn %s", region, arn)
	}
	return fmt.Sprintf("aws dynamodb put-resource-policy --region %s --resource-arn %s --policy '%s'", region, arn, doc)
}

func (r *Runner) flipPointer(ctx context.Context, st *Step, req Request, s State) error {
	var done, skipped []string
	for _, region := range req.Target.Regions {
		rs, _ := s.Region(region)
		c := r.Clients(region).SSM
		_, err := c.PutParameter(ctx, &ssm.PutParameterInput{
			Name: &req.Target.Pointer, Value: &req.Rules.To, Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true),
		})
		if err == nil {
			if rs.Pointer != "" {
				st.Undo = append(st.Undo, fmt.Sprintf("aws ssm put-parameter --region %s --name %s --value %s --type String --overwrite", region, req.Target.Pointer, rs.Pointer))
			}
			var got *ssm.GetParameterOutput
			if got, err = c.GetParameter(ctx, &ssm.GetParameterInput{Name: &req.Target.Pointer}); err == nil && aws.ToString(got.Parameter.Value) != req.Rules.To {
				err = fmt.Errorf("read back %q", aws.ToString(got.Parameter.Value))
			}
		}
		switch {
		case err == nil:
			done = append(done, region)
		case req.Rules.Force && !rs.Answers:
			skipped = append(skipped, region)
		default:
			return fmt.Errorf("setting %s to %s in %s: %w (set in: %v)", req.Target.Pointer, req.Rules.To, region, err, done)
		}
	}
	st.Detail = fmt.Sprintf("%s = %s in %s, read back", req.Target.Pointer, req.Rules.To, strings.Join(done, ", "))
	if len(skipped) > 0 {
		st.Detail += fmt.Sprintf("; NOT set in %s (does not answer, --force): set it when the region is back", strings.Join(skipped, ", "))
	}
	return nil
}

func (r *Runner) route53Plan(req Request) string {
	if len(req.Target.HealthChecks) == 0 {
		return "no Route 53 failover records (no --health-check): nothing to do"
	}
	if req.Rules.Mode == Failback {
		return "restore every Route 53 health check (not inverted): failover routing is automatic again"
	}
	return fmt.Sprintf("invert the Route 53 health checks of every region but %s, so the failover records answer with %s", req.Rules.To, req.Rules.To)
}

func (r *Runner) flipHealthChecks(ctx context.Context, st *Step, req Request) error {
	if len(req.Target.HealthChecks) == 0 {
		st.Status, st.Detail = StepSkipped, "no Route 53 health checks given"
		return nil
	}
	var changed []string
	for _, region := range slices.Sorted(maps.Keys(req.Target.HealthChecks)) {
		id := req.Target.HealthChecks[region]
		want := req.Rules.Mode == Failover && region != req.Rules.To
		hc, err := r.Route53.GetHealthCheck(ctx, &route53.GetHealthCheckInput{HealthCheckId: &id})
		if err != nil {
			return fmt.Errorf("reading health check %s (%s): %w", id, region, err)
		}
		was := aws.ToBool(hc.HealthCheck.HealthCheckConfig.Inverted)
		if was == want {
			continue
		}
		if _, err := r.Route53.UpdateHealthCheck(ctx, &route53.UpdateHealthCheckInput{
			HealthCheckId: &id, Inverted: aws.Bool(want), HealthCheckVersion: hc.HealthCheck.HealthCheckVersion,
		}); err != nil {
			return fmt.Errorf("updating health check %s (%s): %w", id, region, err)
		}
		flag := "--no-inverted"
		if was {
			flag = "--inverted"
		}
		st.Undo = append(st.Undo, fmt.Sprintf("aws route53 update-health-check --health-check-id %s %s", id, flag))
		changed = append(changed, fmt.Sprintf("%s (%s) inverted=%t", id, region, want))
	}
	sort.Strings(changed)
	st.Detail = "health checks already as wanted"
	if len(changed) > 0 {
		st.Detail = "set " + strings.Join(changed, ", ")
	}
	return nil
}

func (r *Runner) replicationCheck(ctx context.Context, st *Step, req Request, s State, c canary) error {
	from, to, table := req.Rules.From, req.Rules.To, req.Target.Table
	fromState, _ := s.Region(from)
	toDB := r.Clients(to).DynamoDB
	switch {
	case !s.Replicated(from, to):
		st.Status = StepSkipped
		st.Detail = fmt.Sprintf("unverifiable: the tables in %s and %s are not replicas of one global table (e.g. stand-ins on the local emulator, which has no global tables), so nothing replicates; not checked", from, to)
	case !fromState.Answers:
		st.Status = StepSkipped
		st.Detail = fmt.Sprintf("unverifiable: %s does not answer (--force)", from)
	default:
		seen, waited, err := r.waitFor(ctx, c, r.Clients(from).DynamoDB, table, req.ReplicationTimeout)
		if err != nil {
			return err
		}
		if !seen {
			return fmt.Errorf("canary %s not seen in %s after %s: replication from %s is not working; the canary stays in %s until its ttl", c.describe(), from, req.ReplicationTimeout, to, to)
		}
		st.Detail = fmt.Sprintf("canary seen in %s after %s", from, waited.Round(time.Millisecond))
	}
	if err := c.delete(ctx, toDB, table); err != nil {
		return err
	}
	st.Detail += "; canary deleted"
	return nil
}

func (r *Runner) waitFor(ctx context.Context, c canary, db DynamoDB, table string, timeout time.Duration) (bool, time.Duration, error) {
	interval := r.PollInterval
	if interval == 0 {
		interval = 2 * time.Second
	}
	start := r.Now()
	seen := false
	o := poll.Options{Interval: interval, Timeout: max(timeout, time.Nanosecond), What: "canary in " + table, Now: r.Now}
	if r.Sleep != nil {
		// The clock of the drain drives the polls too.
		o.After = func(d time.Duration) <-chan time.Time {
			ch := make(chan time.Time, 1)
			_ = r.Sleep(ctx, d)
			ch <- r.Now()
			return ch
		}
	}
	err := poll.Until(ctx, o,
		func(ctx context.Context) (bool, string, error) {
			ok, err := c.read(ctx, db, table, false)
			seen = ok
			return ok, "", err
		})
	if errors.Is(err, poll.ErrTimeout) {
		return false, r.Now().Sub(start), nil
	}
	return seen, r.Now().Sub(start), err
}

// fenceChecks are the preflight checks of the fence this switch writes: the
// break-glass role is one named role, and the policies it writes stay under
// DynamoDB's 20 KB limit (else the switch would fail midway).
func fenceChecks(s State, req Request) []Check {
	var out []Check
	for _, region := range append([]string{req.Rules.From, req.Rules.To}, othersOf(req.Target, req.Rules.From, req.Rules.To)...) {
		rs, ok := s.Region(region)
		if !ok || !rs.TableExists || rs.TableARN == "" {
			continue
		}
		if err := ValidateBreakGlassARN(req.BreakGlassRoleARN, rs.TableARN); err != nil {
			out = append(out, Check{Name: "break-glass-role", Status: CheckFail, Detail: err.Error()})
			return out
		}
		if region == req.Rules.To || (region != req.Rules.From && rs.Fenced) {
			continue // the target is not fenced; a replica fenced already is left as it is
		}
		sid := FenceSid
		if req.Rules.Mode == Failback {
			sid = FailbackFenceSid
		}
		doc, err := withFence(rs.Policy, rs.TableARN, req.BreakGlassRoleARN, sid)
		switch {
		case err != nil:
			out = append(out, Check{Name: "fence-policy-size", Status: CheckFail, Detail: err.Error()})
		case len(doc) > MaxPolicyBytes:
			out = append(out, Check{Name: "fence-policy-size", Status: CheckFail, Detail: fmt.Sprintf("the policy of %s with the fence would be %d bytes, over DynamoDB's %d-byte limit (whitespace counted): shorten its own statements first", rs.TableARN, len(doc), MaxPolicyBytes)})
		default:
			out = append(out, Check{Name: "fence-policy-size", Status: CheckOK, Detail: fmt.Sprintf("the policy of %s with the fence is %d of %d bytes", rs.TableARN, len(doc), MaxPolicyBytes)})
		}
	}
	return out
}
