package failover_test

// Tests of the failover orchestration on the local emulator. moto has no
// global tables, so each test creates a table of the same name in two regions
// (standing in for replicas), the pointer parameter in both, and publishes
// the ReplicationLatency metric it wants CloudWatch to report. moto does not
// evaluate resource policies: these tests read the fence back, they cannot
// see it refuse a write (that runs on AWS in test/modules/dr).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

const (
	home = drpair.Home
	away = drpair.Away
)

type pair struct{ drpair.Pair }

func newPair(t *testing.T, missingAway bool) pair {
	return pair{drpair.New(t, target, drpair.Options{MissingAway: missingAway})}
}

func (p pair) runner(record *[]string) *failover.Runner {
	return &failover.Runner{
		Clients: p.Clients, Now: time.Now, PollInterval: 100 * time.Millisecond,
		Record: func(what, target string, detail any) { *record = append(*record, what) },
	}
}

func (p pair) request(mode failover.Mode, from, to string, execute bool) failover.Request {
	return failover.Request{
		Target: p.Target,
		Rules: failover.Rules{Mode: mode, From: from, To: to, FromGiven: from != "", MaxLatency: 30 * time.Second,
			Window: 15 * time.Minute, AllowUnreplicated: true},
		ReplicationTimeout: 2 * time.Second, Execute: execute,
	}
}

func statuses(res failover.Result) map[string]failover.StepStatus {
	m := map[string]failover.StepStatus{}
	for _, s := range res.Steps {
		m[s.Name] = s.Status
	}
	return m
}

func check(res failover.Result, name string) failover.Check {
	for _, c := range res.Checks {
		if c.Name == name {
			return c
		}
	}
	return failover.Check{}
}

func TestPreflightRefusals_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("latency too high", func(t *testing.T) {
		p := newPair(t, false)
		p.PublishLatency(t, home, away, 800, 45000)
		var rec []string
		res, err := p.runner(&rec).Run(ctx, p.request(failover.Failover, "", away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "replication-latency")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "max 45s")
		assert.Equal(t, failover.StepNotRun, statuses(res)["fence-old"])
		assert.Equal(t, []string{"nothing was changed: the preflight runs before any step"}, res.Rollback)
		p.AssertUnchanged(t)
	})
	t.Run("latency under the threshold passes", func(t *testing.T) {
		p := newPair(t, false)
		p.PublishLatency(t, home, away, 120, 480)
		res, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", away, false))
		require.NoError(t, err)
		c := check(res, "replication-latency")
		assert.Equal(t, failover.CheckOK, c.Status, c.Detail)
		assert.Contains(t, c.Detail, "max 480ms, avg 300ms")
	})
	t.Run("target fenced", func(t *testing.T) {
		p := newPair(t, false)
		// An earlier failover to home left away fenced.
		_, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, home, away, true))
		require.NoError(t, err)
		_, err = p.runner(new([]string)).Run(ctx, p.request(failover.Failback, away, home, true))
		require.NoError(t, err)
		_, err = p.runner(new([]string)).Run(ctx, p.request(failover.Failover, home, away, true))
		require.NoError(t, err)
		require.True(t, p.Fenced(t, home))
		res, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", home, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "target-fence")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "dynops dr failback --table "+p.Table+" --to "+home)
	})
	t.Run("target missing", func(t *testing.T) {
		p := newPair(t, true)
		res, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "target-table")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "does not exist in "+away)
		p.AssertUnchanged(t)
	})
	t.Run("not a global table without --allow-unreplicated", func(t *testing.T) {
		p := newPair(t, false)
		req := p.request(failover.Failover, "", away, true)
		req.Rules.AllowUnreplicated = false
		res, err := p.runner(new([]string)).Run(ctx, req)
		require.ErrorIs(t, err, failover.ErrRefused)
		assert.Equal(t, failover.CheckFail, check(res, "target-replica").Status)
		p.AssertUnchanged(t)
	})
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	p := newPair(t, false)
	var rec []string
	res, err := p.runner(&rec).Run(context.Background(), p.request(failover.Failover, "", away, false))
	require.NoError(t, err)
	assert.True(t, res.DryRun)
	for _, s := range res.Steps[1:] {
		assert.Equal(t, failover.StepPlanned, s.Status, s.Name)
		assert.NotEmpty(t, s.Plan, s.Name)
	}
	assert.Equal(t, []string{"dr failover: preflight", "dr failover: drain-canary", "dr failover: fence-old", "dr failover: drain", "dr failover: drain-check", "dr failover: flip-pointer",
		"dr failover: route53", "dr failover: canary", "dr failover: replication-check"}, rec, "every planned step is audited")
	p.AssertUnchanged(t)
}

func TestFailoverThenFailback_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	p.PublishLatency(t, home, away, 150)
	p.PublishLatency(t, away, home, 150)

	// Route 53 failover records: one health check per region.
	r53 := route53.NewFromConfig(p.Config)
	hc := map[string]string{}
	for _, r := range []string{home, away} {
		out, err := r53.CreateHealthCheck(ctx, &route53.CreateHealthCheckInput{
			CallerReference: aws.String(p.Table + r),
			HealthCheckConfig: &r53types.HealthCheckConfig{Type: r53types.HealthCheckTypeHttps,
				FullyQualifiedDomainName: aws.String(r + ".api.example.com"), Port: aws.Int32(443), ResourcePath: aws.String("/health")},
		})
		require.NoError(t, err)
		hc[r] = aws.ToString(out.HealthCheck.Id)
	}
	p.Target.HealthChecks = hc
	inverted := func(region string) bool {
		out, err := r53.GetHealthCheck(ctx, &route53.GetHealthCheckInput{HealthCheckId: aws.String(hc[region])})
		require.NoError(t, err)
		return aws.ToBool(out.HealthCheck.HealthCheckConfig.Inverted)
	}

	var rec []string
	r := p.runner(&rec)
	r.Route53 = r53
	res, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err, "%+v", res.Steps)
	assert.Equal(t, home, res.From, "from is what the pointer named")

	t.Run("fence applied in the old region, read back", func(t *testing.T) {
		assert.True(t, p.Fenced(t, home))
		assert.False(t, p.Fenced(t, away))
	})
	t.Run("pointer flipped in both regions", func(t *testing.T) {
		assert.Equal(t, away, p.Pointer(t, home))
		assert.Equal(t, away, p.Pointer(t, away))
	})
	t.Run("route53: the old region's health check inverted", func(t *testing.T) {
		assert.True(t, inverted(home))
		assert.False(t, inverted(away))
	})
	t.Run("canary written, read back and deleted; replication unverifiable, not faked", func(t *testing.T) {
		st := statuses(res)
		assert.Equal(t, failover.StepDone, st["canary"])
		assert.Equal(t, failover.StepSkipped, st["replication-check"])
		for _, s := range res.Steps {
			if s.Name == "canary" {
				assert.Contains(t, s.Detail, "written in "+away+" and read back")
			}
			if s.Name == "replication-check" {
				assert.Contains(t, s.Detail, "unverifiable")
				assert.Contains(t, s.Detail, "canary deleted")
			}
		}
		out, err := p.DynamoDB(away).Scan(ctx, &dynamodb.ScanInput{TableName: &p.Table})
		require.NoError(t, err)
		assert.Zero(t, out.Count, "the canary is deleted")
	})
	t.Run("every step audited", func(t *testing.T) {
		assert.Contains(t, rec, "dr failover: fence-old")
		assert.Contains(t, rec, "dr failover: flip-pointer")
	})

	back, err := r.Run(ctx, p.request(failover.Failback, "", "", true))
	require.NoError(t, err, "%+v", back.Steps)
	assert.Equal(t, home, back.To, "failback goes to the one fenced region")
	t.Run("failback removes every fence and flips the pointer back", func(t *testing.T) {
		assert.False(t, p.Fenced(t, home))
		assert.False(t, p.Fenced(t, away))
		assert.Equal(t, home, p.Pointer(t, home))
		assert.Equal(t, home, p.Pointer(t, away))
		assert.False(t, inverted(home))
		assert.False(t, inverted(away))
		st := statuses(back)
		assert.Equal(t, failover.StepDone, st["fence-old"])
		assert.Equal(t, failover.StepDone, st["unfence-target"])
		assert.Equal(t, failover.StepDone, st["unfence-old"])
	})
}

func TestFenceKeepsOtherStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	db := p.Clients(home).DynamoDB
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Table})
	require.NoError(t, err)
	arn := aws.ToString(dt.Table.TableArn)
	own := `{"Version":"2012-10-17","Statement":[{"Sid":"AppReads","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/app"},"Action":"dynamodb:GetItem","Resource":"` + arn + `"}]}`
	_, err = db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &arn, Policy: &own})
	require.NoError(t, err)

	_, err = p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err)
	doc, _, err := failover.ResourcePolicy(ctx, db, arn)
	require.NoError(t, err)
	assert.True(t, failover.HasFence(doc))
	assert.Contains(t, doc, `"AppReads"`)

	_, err = p.runner(new([]string)).Run(ctx, p.request(failover.Failback, "", "", true))
	require.NoError(t, err)
	doc, _, err = failover.ResourcePolicy(ctx, db, arn)
	require.NoError(t, err)
	assert.False(t, failover.HasFence(doc))
	assert.JSONEq(t, own, doc, "the table's own policy is back as it was")
}

// deadRegion points one region's clients at a port where nothing listens: a
// regional outage, through the same code paths.
func deadRegion(t *testing.T, p pair, region string) failover.Regional {
	t.Helper()
	dead, err := awsconfig.Load(context.Background(), awsconfig.Options{Region: region, EndpointURL: "http://127.0.0.1:1", MaxAttempts: 1})
	require.NoError(t, err)
	return func(r string) failover.Clients {
		if r != region {
			return p.Clients(r)
		}
		return drpair.Clients(dead)(region)
	}
}

func TestForceWhenTheOldRegionIsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	r := p.runner(new([]string))
	r.Clients = deadRegion(t, p, home)

	t.Run("without --force: refused, naming --force", func(t *testing.T) {
		res, err := r.Run(ctx, p.request(failover.Failover, home, away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "old-region")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "--force")
		assert.Equal(t, home, p.Pointer(t, away))
	})
	t.Run("with --force: skips only what the old region cannot answer, and says so", func(t *testing.T) {
		req := p.request(failover.Failover, home, away, true)
		req.Rules.Force = true
		res, err := r.Run(ctx, req)
		require.NoError(t, err, "%+v %+v", res.Checks, res.Steps)
		assert.Equal(t, failover.CheckSkipped, check(res, "old-region").Status)
		assert.Equal(t, failover.CheckSkipped, check(res, "replication-latency").Status)
		assert.Equal(t, failover.CheckOK, check(res, "target-table").Status, "the target is still checked")
		assert.Equal(t, failover.CheckOK, check(res, "target-fence").Status, "the target is still checked")
		st := statuses(res)
		assert.Equal(t, failover.StepSkipped, st["fence-old"])
		assert.Equal(t, failover.StepDone, st["flip-pointer"])
		assert.Equal(t, failover.StepDone, st["canary"])
		assert.Equal(t, failover.StepSkipped, st["replication-check"])
		for _, s := range res.Steps {
			switch s.Name {
			case "fence-old":
				assert.Contains(t, s.Detail, "NOT fenced")
			case "flip-pointer":
				assert.Contains(t, s.Detail, "NOT set in "+home)
			}
		}
		assert.Equal(t, away, p.Pointer(t, away))
		assert.Equal(t, home, p.Pointer(t, home), "the real home region was never reached")
	})
}

func TestInjectedFailureStopsAndPrintsRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	r := p.runner(new([]string))
	injected := errors.New("injected: canary region throttled")
	r.BeforeStep = func(name string) error {
		if name == "canary" {
			return injected
		}
		return nil
	}
	res, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.ErrorIs(t, err, injected)
	assert.False(t, res.OK)

	t.Run("the state is reported as it is", func(t *testing.T) {
		assert.Equal(t, map[string]failover.StepStatus{
			"preflight": failover.StepDone, "drain-canary": failover.StepDone, "fence-old": failover.StepDone, "drain": failover.StepDone,
			"drain-check": failover.StepSkipped, "flip-pointer": failover.StepDone, "route53": failover.StepSkipped, "canary": failover.StepFailed, "replication-check": failover.StepNotRun,
		}, statuses(res))
		assert.True(t, p.Fenced(t, home), "the fence stays: the run stopped, it did not undo")
		assert.Equal(t, away, p.Pointer(t, home))
		assert.Equal(t, away, p.Pointer(t, away))
	})
	t.Run("rollback undoes the changes, last first", func(t *testing.T) {
		require.GreaterOrEqual(t, len(res.Rollback), 4, "%v", res.Rollback)
		assert.True(t, strings.HasPrefix(res.Rollback[0], "aws ssm put-parameter --region "+away), res.Rollback[0])
		assert.True(t, strings.HasPrefix(res.Rollback[1], "aws ssm put-parameter --region "+home), res.Rollback[1])
		assert.Contains(t, res.Rollback[2], "aws dynamodb delete-resource-policy --region "+home)
		assert.Contains(t, res.Rollback[3], "dynops dr failback --table "+p.Table+" --regions "+home+","+away+" --allow-unreplicated --to "+home+" --from "+away+" --yes")
	})
	t.Run("the printed dynops rollback restores the pair", func(t *testing.T) {
		back, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failback, away, home, true))
		require.NoError(t, err, "%+v", back.Checks)
		p.AssertUnchanged(t)
		assert.False(t, p.Fenced(t, away))
	})
}

func TestDrillTimesEveryStep(t *testing.T) {
	t.Parallel()
	p := newPair(t, false)
	d, err := p.runner(new([]string)).Drill(context.Background(), p.request(failover.Failover, "", "", true))
	require.NoError(t, err)
	assert.True(t, d.OK)
	assert.Equal(t, home, d.Home)
	assert.Equal(t, away, d.Away)
	require.NotNil(t, d.Failback)
	for _, s := range append(d.Failover.Steps, d.Failback.Steps...) {
		if s.Status == failover.StepDone {
			assert.Positive(t, s.Duration, s.Name)
		}
	}
	assert.Equal(t, d.Failover.Duration, d.RTO)
	assert.GreaterOrEqual(t, d.Total, d.Failover.Duration+d.Failback.Duration)
	p.AssertUnchanged(t)
}

// TestFailoverKilledBetweenFenceAndFlip: a failover that stops right after
// fencing the old region (killed before the pointer flip; the runner undoes
// nothing, as a killed process would not) leaves a state `dr status` names as
// half-done; a re-run of the failover finishes it, and, from the same
// half-done state, a failback undoes it.
func TestFailoverKilledBetweenFenceAndFlip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	killed := errors.New("killed between fence and pointer flip")
	for _, finish := range []string{"failover again", "failback"} {
		t.Run(finish, func(t *testing.T) {
			p := newPair(t, false)
			r := p.runner(new([]string))
			r.BeforeStep = func(name string) error {
				if name == "flip-pointer" {
					return killed
				}
				return nil
			}
			_, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
			require.ErrorIs(t, err, killed)
			require.True(t, p.Fenced(t, home))
			require.Equal(t, home, p.Pointer(t, home))

			st := failover.Inspect(ctx, p.Clients, p.Target, 15*time.Minute, time.Now())
			half := st.HalfDone()
			assert.Contains(t, half, "HALF-DONE")
			assert.Contains(t, half, "fenced but the pointer still names it")

			r.BeforeStep = nil
			if finish == "failover again" {
				res, err := r.Run(ctx, p.request(failover.Failover, home, away, true))
				require.NoError(t, err, "%+v", res.Checks)
				assert.True(t, p.Fenced(t, home))
				assert.Equal(t, away, p.Pointer(t, home))
				assert.Equal(t, away, p.Pointer(t, away))
			} else {
				// The undo HalfDone names: no --from.
				res, err := r.Run(ctx, p.request(failover.Failback, "", home, true))
				require.NoError(t, err, "%+v", res.Checks)
				p.AssertUnchanged(t)
				assert.False(t, p.Fenced(t, home))
			}
			after := failover.Inspect(ctx, p.Clients, p.Target, 15*time.Minute, time.Now())
			assert.Empty(t, after.HalfDone(), "consistent again")
		})
	}
}

// TestSwitchKilledAfterThePointerFlipResumes: a switch that stopped after
// its pointer flip (killed before the route53 step, the canary, the
// replication check or a failback's unfence of the old region) left the
// pointer naming --to; a re-run of the same switch (no --from) resumes it
// from the fenced old region instead of refusing a switch "to where writes
// already go", and ends where the uninterrupted switch ends. A re-run of a
// finished failover verifies it again (canary, replication check); a
// finished failback leaves nothing fenced, so its re-run is refused, with
// the state unchanged. (Found by test/robustness/chaos's
// TestDRKilledAndRerun: a failover killed after the flip could not be
// re-run.)
func TestSwitchKilledAfterThePointerFlipResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	killed := errors.New("killed after the pointer flip")
	cases := []struct {
		mode    failover.Mode
		killAt  string // "" : the switch finished
		partial bool   // the flip reached home only: away's pointer still names the old region
	}{
		{mode: failover.Failover, killAt: "route53", partial: true}, {mode: failover.Failback, killAt: "route53", partial: true},
		{mode: failover.Failover, killAt: "route53"}, {mode: failover.Failover, killAt: "canary"}, {mode: failover.Failover, killAt: "replication-check"}, {mode: failover.Failover, killAt: ""},
		{mode: failover.Failback, killAt: "route53"}, {mode: failover.Failback, killAt: "canary"}, {mode: failover.Failback, killAt: "replication-check"}, {mode: failover.Failback, killAt: "unfence-old"}, {mode: failover.Failback, killAt: ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s killed before %q partial flip %v", c.mode, c.killAt, c.partial), func(t *testing.T) {
			p := newPair(t, false)
			r := p.runner(new([]string))
			to := away
			if c.mode == failover.Failback {
				_, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
				require.NoError(t, err)
				to = home
			}
			r.BeforeStep = func(name string) error {
				if name == c.killAt {
					return killed
				}
				return nil
			}
			_, err := r.Run(ctx, p.request(c.mode, "", to, true))
			if c.killAt != "" {
				require.ErrorIs(t, err, killed)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, to, p.Pointer(t, home), "the pointer was flipped before the kill")
			// dr status after the kill: a failback stopped after its flip
			// left its temporary fence on the region it left (HALF-DONE,
			// naming the failback that finishes it); a failover stopped
			// after its flip is in its end state (its fence stays).
			half := failover.Inspect(ctx, p.Clients, p.Target, 15*time.Minute, time.Now()).HalfDone()
			switch {
			case c.mode == failover.Failback && c.killAt != "":
				assert.Contains(t, half, "HALF-DONE: the pointer names "+home+", but "+away+" still carries the temporary fence of a failback")
				assert.Contains(t, half, "dynops dr failback --table "+p.Target.Table+" --to "+home+" --yes")
			default:
				assert.Empty(t, half)
			}
			if c.partial {
				old := map[string]string{away: home, home: away}[to]
				_, err := p.Clients(away).SSM.PutParameter(ctx, &ssm.PutParameterInput{Name: &p.Target.Pointer, Value: &old, Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)})
				require.NoError(t, err)
				half := failover.Inspect(ctx, p.Clients, p.Target, 15*time.Minute, time.Now()).HalfDone()
				require.Contains(t, half, "the pointers disagree")
			}

			r.BeforeStep = nil
			res, err := r.Run(ctx, p.request(c.mode, "", to, true))
			if c.mode == failover.Failback && c.killAt == "" {
				// Nothing fenced: no switch to resume; the re-run is refused
				// before any step and names why.
				require.ErrorIs(t, err, failover.ErrRefused)
				assert.Contains(t, err.Error(), "writes are already meant to go to "+home)
			} else {
				require.NoError(t, err, "the re-run resumes the switch: %+v", res.Checks)
			}
			assert.Equal(t, to, p.Pointer(t, home))
			assert.Equal(t, to, p.Pointer(t, away))
			assert.False(t, p.Fenced(t, to), "the region writes go to is not fenced")
			assert.Equal(t, c.mode == failover.Failover, p.Fenced(t, home), "after a failover the old region stays fenced; after a failback nothing is")
			assert.False(t, p.Fenced(t, away))
			after := failover.Inspect(ctx, p.Clients, p.Target, 15*time.Minute, time.Now())
			assert.Empty(t, after.HalfDone())
		})
	}
}

// TestDrillDryRunAndRefusal: a dry-run drill plans the failover only, is OK
// and changes nothing; a drill whose failover is refused (no table in the
// away region) is not OK, runs no failback, and changes nothing either.
func TestDrillDryRunAndRefusal(t *testing.T) {
	t.Parallel()
	t.Run("dry run", func(t *testing.T) {
		p := newPair(t, false)
		d, err := p.runner(new([]string)).Drill(context.Background(), p.request(failover.Failover, "", "", false))
		require.NoError(t, err)
		assert.True(t, d.OK, "a dry run that plans the failover is OK")
		assert.True(t, d.DryRun)
		assert.Nil(t, d.Failback, "the failback's preflight depends on the failover's state: not planned")
		assert.Equal(t, failover.StepPlanned, statuses(d.Failover)["fence-old"])
		p.AssertUnchanged(t)
	})
	t.Run("refused", func(t *testing.T) {
		p := newPair(t, true)
		d, err := p.runner(new([]string)).Drill(context.Background(), p.request(failover.Failover, home, away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		assert.False(t, d.OK)
		assert.Nil(t, d.Failback)
		p.AssertUnchanged(t)
	})
}
