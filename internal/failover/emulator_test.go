package failover_test

// Tests of the failover orchestration on the local emulator. moto has no
// global tables, so each test creates a table of the same name in two regions
// (standing in for replicas), the pointer parameter in both, and publishes
// the ReplicationLatency metric it wants CloudWatch to report. moto does not
// evaluate resource policies: these tests read the fence back, they cannot
// see it refuse a write (that runs on AWS in test/dr).

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

const (
	home = "eu-west-1"
	away = "eu-central-1"
)

// pair is a same-name table in two regions of the emulator with its pointer.
type pair struct {
	table   string
	target  failover.Target
	clients failover.Regional
	cfg     aws.Config
}

func onEmulator(t *testing.T) {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("stand-in tables in two regions: emulator only; on AWS test/dr drills a real global table")
	}
}

// newPair creates the table in both regions (or only in home when missingAway)
// and sets the pointer to home in both.
func newPair(t *testing.T, missingAway bool) pair {
	t.Helper()
	onEmulator(t)
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	p := pair{table: "dev-" + harness.UniqueID() + "-session", cfg: cfg}
	p.clients = func(region string) failover.Clients {
		c := awsconfig.ForRegion(cfg, region)
		return failover.Clients{DynamoDB: dynamodb.NewFromConfig(c), SSM: ssm.NewFromConfig(c), CloudWatch: cloudwatch.NewFromConfig(c, awsconfig.CloudWatchQueryProtocol)}
	}
	p.target = failover.Target{Table: p.table, Regions: []string{home, away}, Pointer: failover.DefaultPointer(p.table)}
	for _, r := range []string{home, away} {
		if r == away && missingAway {
			continue
		}
		db := dynamodb.NewFromConfig(awsconfig.ForRegion(cfg, r))
		_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            &p.table,
			BillingMode:          types.BillingModePayPerRequest,
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("session_id"), KeyType: types.KeyTypeHash}},
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("session_id"), AttributeType: types.ScalarAttributeTypeS}},
		})
		require.NoError(t, err)
	}
	for _, r := range []string{home, away} {
		_, err := ssm.NewFromConfig(awsconfig.ForRegion(cfg, r)).PutParameter(ctx, &ssm.PutParameterInput{
			Name: &p.target.Pointer, Value: aws.String(home), Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true),
		})
		require.NoError(t, err)
	}
	return p
}

// publishLatency puts ReplicationLatency datapoints (milliseconds) as the
// source region would publish them for receiving.
func (p pair) publishLatency(t *testing.T, source, receiving string, ms ...float64) {
	t.Helper()
	var data []cwtypes.MetricDatum
	for _, v := range ms {
		data = append(data, cwtypes.MetricDatum{
			MetricName: aws.String("ReplicationLatency"), Value: aws.Float64(v), Unit: cwtypes.StandardUnitMilliseconds,
			Dimensions: []cwtypes.Dimension{{Name: aws.String("TableName"), Value: &p.table}, {Name: aws.String("ReceivingRegion"), Value: aws.String(receiving)}},
		})
	}
	_, err := cloudwatch.NewFromConfig(awsconfig.ForRegion(p.cfg, source), awsconfig.CloudWatchQueryProtocol).PutMetricData(context.Background(),
		&cloudwatch.PutMetricDataInput{Namespace: aws.String("AWS/DynamoDB"), MetricData: data})
	require.NoError(t, err)
}

func (p pair) pointer(t *testing.T, region string) string {
	t.Helper()
	out, err := p.clients(region).SSM.GetParameter(context.Background(), &ssm.GetParameterInput{Name: &p.target.Pointer})
	require.NoError(t, err)
	return aws.ToString(out.Parameter.Value)
}

// fenced reads the table's resource policy back in region.
func (p pair) fenced(t *testing.T, region string) bool {
	t.Helper()
	db := p.clients(region).DynamoDB
	dt, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &p.table})
	require.NoError(t, err)
	doc, _, err := failover.ResourcePolicy(context.Background(), db, aws.ToString(dt.Table.TableArn))
	require.NoError(t, err)
	return failover.HasFence(doc)
}

func (p pair) runner(record *[]string) *failover.Runner {
	return &failover.Runner{
		Clients: p.clients, Now: time.Now, PollInterval: 100 * time.Millisecond,
		Record: func(what, target string, detail any) { *record = append(*record, what) },
	}
}

func (p pair) request(mode failover.Mode, from, to string, execute bool) failover.Request {
	return failover.Request{
		Target: p.target,
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

// assertUnchanged checks that a refused or dry run left the pair as it was.
func (p pair) assertUnchanged(t *testing.T) {
	t.Helper()
	assert.Equal(t, home, p.pointer(t, home))
	assert.Equal(t, home, p.pointer(t, away))
	assert.False(t, p.fenced(t, home), "home must not be fenced")
}

func TestPreflightRefusals_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("latency too high", func(t *testing.T) {
		p := newPair(t, false)
		p.publishLatency(t, home, away, 800, 45000)
		var rec []string
		res, err := p.runner(&rec).Run(ctx, p.request(failover.Failover, "", away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "replication-latency")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "max 45s")
		assert.Equal(t, failover.StepNotRun, statuses(res)["fence-old"])
		assert.Equal(t, []string{"nothing was changed: the preflight runs before any step"}, res.Rollback)
		p.assertUnchanged(t)
	})
	t.Run("latency under the threshold passes", func(t *testing.T) {
		p := newPair(t, false)
		p.publishLatency(t, home, away, 120, 480)
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
		require.True(t, p.fenced(t, home))
		res, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", home, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "target-fence")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "dynops dr failback --table "+p.table+" --to "+home)
	})
	t.Run("target missing", func(t *testing.T) {
		p := newPair(t, true)
		res, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failover, "", away, true))
		require.ErrorIs(t, err, failover.ErrRefused)
		c := check(res, "target-table")
		assert.Equal(t, failover.CheckFail, c.Status)
		assert.Contains(t, c.Detail, "does not exist in "+away)
		p.assertUnchanged(t)
	})
	t.Run("not a global table without --allow-unreplicated", func(t *testing.T) {
		p := newPair(t, false)
		req := p.request(failover.Failover, "", away, true)
		req.Rules.AllowUnreplicated = false
		res, err := p.runner(new([]string)).Run(ctx, req)
		require.ErrorIs(t, err, failover.ErrRefused)
		assert.Equal(t, failover.CheckFail, check(res, "target-replica").Status)
		p.assertUnchanged(t)
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
	assert.Equal(t, []string{"dr failover: preflight", "dr failover: fence-old", "dr failover: flip-pointer",
		"dr failover: route53", "dr failover: canary", "dr failover: replication-check"}, rec, "every planned step is audited")
	p.assertUnchanged(t)
}

func TestFailoverThenFailback_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	p.publishLatency(t, home, away, 150)
	p.publishLatency(t, away, home, 150)

	// Route 53 failover records: one health check per region.
	r53 := route53.NewFromConfig(p.cfg)
	hc := map[string]string{}
	for _, r := range []string{home, away} {
		out, err := r53.CreateHealthCheck(ctx, &route53.CreateHealthCheckInput{
			CallerReference: aws.String(p.table + r),
			HealthCheckConfig: &r53types.HealthCheckConfig{Type: r53types.HealthCheckTypeHttps,
				FullyQualifiedDomainName: aws.String(r + ".api.example.com"), Port: aws.Int32(443), ResourcePath: aws.String("/health")},
		})
		require.NoError(t, err)
		hc[r] = aws.ToString(out.HealthCheck.Id)
	}
	p.target.HealthChecks = hc
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
		assert.True(t, p.fenced(t, home))
		assert.False(t, p.fenced(t, away))
	})
	t.Run("pointer flipped in both regions", func(t *testing.T) {
		assert.Equal(t, away, p.pointer(t, home))
		assert.Equal(t, away, p.pointer(t, away))
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
			if s.Name == "replication-check" {
				assert.Contains(t, s.Detail, "unverifiable")
				assert.Contains(t, s.Detail, "canary deleted")
			}
		}
		out, err := dynamodb.NewFromConfig(awsconfig.ForRegion(p.cfg, away)).Scan(ctx, &dynamodb.ScanInput{TableName: &p.table})
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
		assert.False(t, p.fenced(t, home))
		assert.False(t, p.fenced(t, away))
		assert.Equal(t, home, p.pointer(t, home))
		assert.Equal(t, home, p.pointer(t, away))
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
	db := p.clients(home).DynamoDB
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.table})
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
			return p.clients(r)
		}
		return failover.Clients{DynamoDB: dynamodb.NewFromConfig(dead), SSM: ssm.NewFromConfig(dead), CloudWatch: cloudwatch.NewFromConfig(dead, awsconfig.CloudWatchQueryProtocol)}
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
		assert.Equal(t, home, p.pointer(t, away))
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
		assert.Equal(t, away, p.pointer(t, away))
		assert.Equal(t, home, p.pointer(t, home), "the real home region was never reached")
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
			"preflight": failover.StepDone, "fence-old": failover.StepDone, "flip-pointer": failover.StepDone,
			"route53": failover.StepSkipped, "canary": failover.StepFailed, "replication-check": failover.StepNotRun,
		}, statuses(res))
		assert.True(t, p.fenced(t, home), "the fence stays: the run stopped, it did not undo")
		assert.Equal(t, away, p.pointer(t, home))
		assert.Equal(t, away, p.pointer(t, away))
	})
	t.Run("rollback undoes the changes, last first", func(t *testing.T) {
		require.GreaterOrEqual(t, len(res.Rollback), 4, "%v", res.Rollback)
		assert.True(t, strings.HasPrefix(res.Rollback[0], "aws ssm put-parameter --region "+away), res.Rollback[0])
		assert.True(t, strings.HasPrefix(res.Rollback[1], "aws ssm put-parameter --region "+home), res.Rollback[1])
		assert.Contains(t, res.Rollback[2], "aws dynamodb delete-resource-policy --region "+home)
		assert.Contains(t, res.Rollback[3], "dynops dr failback --table "+p.table+" --regions "+home+","+away+" --allow-unreplicated --to "+home+" --from "+away+" --yes")
	})
	t.Run("the printed dynops rollback restores the pair", func(t *testing.T) {
		back, err := p.runner(new([]string)).Run(ctx, p.request(failover.Failback, away, home, true))
		require.NoError(t, err, "%+v", back.Checks)
		p.assertUnchanged(t)
		assert.False(t, p.fenced(t, away))
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
	p.assertUnchanged(t)
}
