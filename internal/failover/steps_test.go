package failover

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSummaryCountsEachStatus: the preflight line counts every check once,
// by its status.
func TestSummaryCountsEachStatus(t *testing.T) {
	checks := []Check{{Status: CheckOK}, {Status: CheckOK}, {Status: CheckWarn}, {Status: CheckSkipped}, {Status: CheckFail}}
	assert.Equal(t, "5 checks: 2 ok, 1 warn, 1 skipped", summary(checks))
	assert.Equal(t, "0 checks: 0 ok, 0 warn, 0 skipped", summary(nil))
}

// TestRollbackUndoesDoneAndFailedSteps_DDB_DR_01: the rollback lists the
// undo of every step that changed something, a failed step's included (a
// fence written but not read back), last change first; steps skipped or
// not run add nothing.
func TestRollbackUndoesDoneAndFailedSteps_DDB_DR_01(t *testing.T) {
	req := Request{Target: Target{Table: "prod-hoge-user", Regions: []string{"eu-west-1", "us-east-1"}, Pointer: DefaultPointer("prod-hoge-user")},
		Rules: Rules{Mode: Failover, From: "eu-west-1", To: "us-east-1"}}
	res := Result{From: "eu-west-1", To: "us-east-1", Steps: []Step{
		{Name: "preflight", Status: StepDone},
		{Name: "fence", Status: StepDone, Undo: []string{"undo fence 1", "undo fence 2"}},
		{Name: "route53", Status: StepSkipped, Undo: []string{"not this"}},
		{Name: "pointer", Status: StepFailed, Undo: []string{"undo pointer"}},
		{Name: "canary", Status: StepNotRun, Undo: []string{"nor this"}},
	}}
	assert.Equal(t, []string{"undo pointer", "undo fence 2", "undo fence 1",
		"or, all of the above with dynops: dynops dr failback --table prod-hoge-user --regions eu-west-1,us-east-1 --to eu-west-1 --from us-east-1 --yes"},
		rollback(res, req))

	res.Steps = res.Steps[:1]
	assert.Equal(t, []string{"nothing was changed before the failure"}, rollback(res, req))
}

// healthChecks is Route 53 holding health checks by ID (Inverted or not).
type healthChecks struct {
	inverted map[string]bool
	updates  int
}

func (h *healthChecks) GetHealthCheck(_ context.Context, in *route53.GetHealthCheckInput, _ ...func(*route53.Options)) (*route53.GetHealthCheckOutput, error) {
	return &route53.GetHealthCheckOutput{HealthCheck: &r53types.HealthCheck{Id: in.HealthCheckId, HealthCheckVersion: aws.Int64(1),
		HealthCheckConfig: &r53types.HealthCheckConfig{Inverted: aws.Bool(h.inverted[aws.ToString(in.HealthCheckId)])}}}, nil
}

func (h *healthChecks) UpdateHealthCheck(_ context.Context, in *route53.UpdateHealthCheckInput, _ ...func(*route53.Options)) (*route53.UpdateHealthCheckOutput, error) {
	h.updates++
	h.inverted[aws.ToString(in.HealthCheckId)] = aws.ToBool(in.Inverted)
	return &route53.UpdateHealthCheckOutput{}, nil
}

// TestFlipHealthChecks: a failover inverts the health check of every region
// but the new one, and says which it set; checks already as wanted are
// left alone and the step says so; without health checks it is skipped.
func TestFlipHealthChecks(t *testing.T) {
	target := Target{Table: "prod-hoge-user", HealthChecks: map[string]string{"eu-west-1": "hc-eu", "us-east-1": "hc-us"}}
	req := Request{Target: target, Rules: Rules{Mode: Failover, From: "eu-west-1", To: "us-east-1"}}

	h := &healthChecks{inverted: map[string]bool{}}
	r := &Runner{Route53: h}
	var st Step
	require.NoError(t, r.flipHealthChecks(testctx.Bounded(t), &st, req))
	assert.Equal(t, "set hc-eu (eu-west-1) inverted=true", st.Detail)
	assert.Equal(t, map[string]bool{"hc-eu": true}, h.inverted)
	assert.Equal(t, []string{"aws route53 update-health-check --health-check-id hc-eu --no-inverted"}, st.Undo)

	st = Step{}
	require.NoError(t, r.flipHealthChecks(testctx.Bounded(t), &st, req))
	assert.Equal(t, "health checks already as wanted", st.Detail)
	assert.Equal(t, 1, h.updates, "nothing written the second time")
	assert.Empty(t, st.Undo)

	st = Step{}
	require.NoError(t, r.flipHealthChecks(testctx.Bounded(t), &st, Request{Rules: req.Rules}))
	assert.Equal(t, StepSkipped, st.Status)
}

// TestStepPlansNameWhatTheyChange: the plan a dry run prints names the
// principals the fence exempts (the break-glass role only when given), the
// fence statement of the mode, and what the Route 53 step does in each mode.
func TestStepPlansNameWhatTheyChange(t *testing.T) {
	const role = "arn:aws:iam::111122223333:role/break-glass"
	s := globalState()
	plans := func(mode Mode, breakGlass string, healthChecks map[string]string) map[string]string {
		req := Request{Target: s.Target, Rules: rules(), BreakGlassRoleARN: breakGlass}
		req.Rules.Mode = mode
		req.Target.HealthChecks = healthChecks
		out := map[string]string{}
		for _, d := range (&Runner{Now: time.Now}).steps(req, s, nil) {
			out[d.name] = d.plan
		}
		return out
	}
	hcs := map[string]string{"eu-west-1": "hc-eu", "eu-central-1": "hc-central"}

	p := plans(Failover, "", nil)
	assert.Contains(t, p["fence-old"], "in eu-west-1 to every principal but the replication role (resource policy statement "+FenceSid+")")
	assert.Equal(t, "no Route 53 failover records (no --health-check): nothing to do", p["route53"])

	p = plans(Failover, role, hcs)
	assert.Contains(t, p["fence-old"], "to every principal but "+role+" and the replication role (resource policy statement "+FenceSid+")")
	assert.Equal(t, "invert the Route 53 health checks of every region but eu-central-1, so the failover records answer with eu-central-1", p["route53"])

	p = plans(Failback, "", hcs)
	assert.Contains(t, p["fence-old"], "(resource policy statement "+FailbackFenceSid+")")
	assert.Equal(t, "restore every Route 53 health check (not inverted): failover routing is automatic again", p["route53"])
}
