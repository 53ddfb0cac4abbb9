package failover_test

// The pause drill on the local emulator. moto has no AWS FIS (its
// StartExperiment answers 404), so fakeFIS (a fake at the SDK interface,
// named so) stands in for the service: starting an experiment does what the
// aws:dynamodb:global-table-pause-replication action does to the replica
// (its Deny statement for the replication role, written into the table's
// resource policy on the emulator) and, as the latency a pause makes would,
// sets the ReplicationLatency alarm to ALARM; stopping removes the
// statement. The tables, their resource policies, the pointers and the
// alarm are the emulator's, over HTTP, through the production code paths.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/fis"
	fistypes "github.com/aws/aws-sdk-go-v2/service/fis/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/failover"
)

type fakeFIS struct {
	mu       sync.Mutex
	template fistypes.ExperimentTemplate
	db       *dynamodb.Client // the paused region's
	cw       *cloudwatch.Client
	alarm    string
	tableARN string
	// noPause: the experiment runs but writes no statement (a template
	// that does not reach the table).
	noPause bool
	status  fistypes.ExperimentStatus
	started int
	stopped int
	// startedAs changes the experiment StartExperiment returns (FIS returns
	// the actions and targets it runs): a template edited between the
	// drill's read and its start.
	startedAs func(*fistypes.Experiment)
}

func (f *fakeFIS) GetExperimentTemplate(_ context.Context, in *fis.GetExperimentTemplateInput, _ ...func(*fis.Options)) (*fis.GetExperimentTemplateOutput, error) {
	if aws.ToString(in.Id) != aws.ToString(f.template.Id) {
		return nil, &fistypes.ResourceNotFoundException{Message: aws.String("experiment template not found")}
	}
	t := f.template
	return &fis.GetExperimentTemplateOutput{ExperimentTemplate: &t}, nil
}

func (f *fakeFIS) StartExperiment(ctx context.Context, in *fis.StartExperimentInput, _ ...func(*fis.Options)) (*fis.StartExperimentOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started++
	f.status = fistypes.ExperimentStatusRunning
	if !f.noPause {
		doc := `{"Version":"2012-10-17","Statement":[{"Sid":"DoNotModifyFisDynamoDbPauseReplicationEXPfake","Effect":"Deny","Principal":{"AWS":"*"},` +
			`"Action":["dynamodb:GetItem","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem"],"Resource":"` + f.tableARN + `",` +
			`"Condition":{"DateLessThan":{"aws:CurrentTime":"` + time.Now().Add(10*time.Minute).UTC().Format(time.RFC3339) + `"},` +
			`"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::123456789012:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"}}}]}`
		if _, err := f.db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &f.tableARN, Policy: &doc}); err != nil {
			return nil, err
		}
	}
	if f.alarm != "" {
		if _, err := f.cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: &f.alarm, StateValue: cwtypes.StateValueAlarm,
			StateReason: aws.String("replication paused: latency grows")}); err != nil {
			return nil, err
		}
	}
	e := &fistypes.Experiment{Id: aws.String("EXPfake"), ExperimentTemplateId: f.template.Id,
		Actions: map[string]fistypes.ExperimentAction{}, Targets: map[string]fistypes.ExperimentTarget{}}
	for name, a := range f.template.Actions {
		e.Actions[name] = fistypes.ExperimentAction{ActionId: a.ActionId, Parameters: a.Parameters, Targets: a.Targets}
	}
	for name, tg := range f.template.Targets {
		e.Targets[name] = fistypes.ExperimentTarget{ResourceType: tg.ResourceType, ResourceArns: tg.ResourceArns, SelectionMode: tg.SelectionMode}
	}
	if f.startedAs != nil {
		f.startedAs(e)
	}
	return &fis.StartExperimentOutput{Experiment: e}, nil
}

func (f *fakeFIS) GetExperiment(_ context.Context, in *fis.GetExperimentInput, _ ...func(*fis.Options)) (*fis.GetExperimentOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fis.GetExperimentOutput{Experiment: &fistypes.Experiment{Id: in.Id, State: &fistypes.ExperimentState{Status: f.status}}}, nil
}

func (f *fakeFIS) StopExperiment(ctx context.Context, in *fis.StopExperimentInput, _ ...func(*fis.Options)) (*fis.StopExperimentOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped++
	f.status = fistypes.ExperimentStatusStopped
	if !f.noPause {
		if _, err := f.db.DeleteResourcePolicy(ctx, &dynamodb.DeleteResourcePolicyInput{ResourceArn: &f.tableARN}); err != nil {
			return nil, err
		}
	}
	return &fis.StopExperimentOutput{}, nil
}

// pauseFixture is a pair, the paused region's alarm and a fake FIS whose
// template pauses the pair's table in away.
func pauseFixture(t *testing.T, action string, targetARN func(arn string) string) (pair, *fakeFIS, failover.PauseDrillRequest) {
	t.Helper()
	ctx := context.Background()
	p := newPair(t, false)
	_, arn := policyOf(t, p, away)
	cw := cloudwatch.NewFromConfig(awsclients.ForRegion(p.Config, away), awsclients.CloudWatchQueryProtocol)
	alarm := p.Table + "-replication-latency-" + away
	_, err := cw.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: &alarm, Namespace: aws.String("AWS/DynamoDB"),
		MetricName: aws.String("ReplicationLatency"), Statistic: cwtypes.StatisticMaximum, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1),
		Threshold: aws.Float64(60000), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		Dimensions: []cwtypes.Dimension{{Name: aws.String("TableName"), Value: &p.Table}, {Name: aws.String("ReceivingRegion"), Value: aws.String(away)}}})
	require.NoError(t, err)
	f := &fakeFIS{db: p.DynamoDB(away), cw: cw, alarm: alarm, tableARN: arn, template: fistypes.ExperimentTemplate{
		Id: aws.String("EXTfake"),
		Actions: map[string]fistypes.ExperimentTemplateAction{"pause": {ActionId: aws.String(action),
			Parameters: map[string]string{"duration": "PT10M"}, Targets: map[string]string{"Tables": "Tables"}}},
		Targets: map[string]fistypes.ExperimentTemplateTarget{"Tables": {ResourceType: aws.String("aws:dynamodb:global-table"),
			ResourceArns: []string{targetARN(arn)}, SelectionMode: aws.String("ALL")}},
	}}
	req := failover.PauseDrillRequest{Target: p.Target, Template: "EXTfake", Region: away, Account: emulatorAccount, Alarm: alarm, Execute: true,
		Rules:   p.request(failover.Failover, "", away, true).Rules,
		Timeout: 5 * time.Second, Poll: 50 * time.Millisecond}
	return p, f, req
}

// TestPauseDrill_DDB_DR_01: the drill starts the experiment, sees the pause
// in the replica's resource policy, has the failover preflight into that
// region refuse (replication-paused), sees the alarm fire, stops the
// experiment and sees the pause gone; every step is audited.
func TestPauseDrill_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p, f, req := pauseFixture(t, failover.PauseActionID, func(arn string) string { return arn })
	var record []string
	res, err := p.runner(&record).PauseDrill(context.Background(), f, f.cw, req)
	require.NoError(t, err, "%+v", res.Steps)
	assert.True(t, res.OK)
	var names []string
	for _, s := range res.Steps {
		names = append(names, s.Name)
		assert.Equal(t, failover.StepDone, s.Status, s.Name)
	}
	assert.Equal(t, []string{"check-template", "start-experiment", "pause-seen", "preflight-refuses", "alarm-fires", "stop-experiment"}, names)
	require.Len(t, res.Refused, 1, "only the pause refuses the switch: %v", res.Refused)
	assert.Contains(t, res.Refused[0], "replication-paused: replication is paused ("+away+": an AWS FIS experiment")
	require.NotNil(t, res.AlarmFired)
	assert.True(t, *res.AlarmFired)
	assert.Equal(t, 1, f.started)
	assert.GreaterOrEqual(t, f.stopped, 1)
	doc, _ := policyOf(t, p, away)
	assert.Empty(t, failover.ReplicationPauses(doc), "the pause is gone at the end")
	assert.Contains(t, record, "dr drill --pause-replication: preflight-refuses", "each step is audited")
}

// TestPauseDrillRefusesOtherTemplates: a template that targets another
// table or region, or runs another action, is refused before any
// experiment starts; a dry run reads the template and starts nothing.
func TestPauseDrillRefusesOtherTemplates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		action string
		arn    func(string) string
		want   string
	}{
		{"another table", failover.PauseActionID, func(a string) string { return a + "-other" }, "targets"},
		{"another region", failover.PauseActionID, func(a string) string { return "arn:aws:dynamodb:us-west-2:123456789012:table/x" }, "targets"},
		{"another action", "aws:fis:inject-api-internal-error", func(a string) string { return a }, "a pause drill runs only " + failover.PauseActionID},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, f, req := pauseFixture(t, c.action, c.arn)
			res, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Zero(t, f.started, "nothing started")
			assert.False(t, res.OK)
		})
	}
	t.Run("dry run", func(t *testing.T) {
		p, f, req := pauseFixture(t, failover.PauseActionID, func(a string) string { return a })
		req.Execute = false
		res, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
		require.NoError(t, err)
		assert.True(t, res.DryRun)
		assert.Zero(t, f.started, "a dry run starts no experiment")
		assert.Equal(t, failover.StepDone, res.Steps[0].Status, "the template is checked")
		for _, s := range res.Steps[1:] {
			assert.Equal(t, failover.StepNotRun, s.Status, s.Name)
		}
	})
}

// emulatorAccount is the account moto puts in every ARN (the caller's, as
// sts:GetCallerIdentity answers on the emulator).
const emulatorAccount = "123456789012"

// TestPauseDrillRefusesForeignTargets_FakeFIS (issue 44): moto has no AWS
// FIS, so a fake at the SDK interface serves the template. A target ARN in
// another account than the caller's, in another region, a template that
// reaches other accounts, or an unknown caller account refuses the drill
// before any experiment starts (ErrTemplateRefused: exit 2), naming the ARN.
func TestPauseDrillRefusesForeignTargets_FakeFIS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		arn     func(string) string
		account string
		edit    func(*fistypes.ExperimentTemplate)
		want    string
	}{
		{"another account", func(a string) string { return strings.Replace(a, ":"+emulatorAccount+":", ":999999999999:", 1) }, emulatorAccount, nil,
			"account 999999999999: the drill runs in the caller's account " + emulatorAccount},
		{"caller account unknown", func(a string) string { return a }, "", nil, "the caller's account is unknown"},
		{"another region, same table", func(a string) string { return strings.Replace(a, ":"+away+":", ":ap-south-1:", 1) }, emulatorAccount, nil, "region ap-south-1"},
		{"multi-account template", func(a string) string { return a }, emulatorAccount, func(t *fistypes.ExperimentTemplate) {
			t.ExperimentOptions = &fistypes.ExperimentTemplateExperimentOptions{AccountTargeting: fistypes.AccountTargetingMultiAccount}
		}, "targets other accounts"},
		{"tags besides the ARN", func(a string) string { return a }, emulatorAccount, func(t *fistypes.ExperimentTemplate) {
			tg := t.Targets["Tables"]
			tg.ResourceTags = map[string]string{"env": "stg"}
			t.Targets["Tables"] = tg
		}, "selects tables by tag or filter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, f, req := pauseFixture(t, failover.PauseActionID, c.arn)
			if c.edit != nil {
				c.edit(&f.template)
			}
			req.Account = c.account
			_, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
			require.ErrorIs(t, err, failover.ErrTemplateRefused)
			assert.Contains(t, err.Error(), c.want)
			if c.name != "multi-account template" && c.name != "tags besides the ARN" {
				assert.Contains(t, err.Error(), c.arn(f.tableARN), "the error names the ARN")
			}
			assert.Zero(t, f.started, "nothing started")
		})
	}
}

// TestPauseDrillStopsAnExperimentThatDiffersFromTheCheck_FakeFIS (issue 44):
// StartExperiment takes a template ID, so the template may change between
// the drill's read and the start. moto has no AWS FIS: the fake returns the
// started experiment as FIS does (its actions and targets). When they are
// not what was checked (another table, another account, another action,
// another template), the drill stops the experiment at once and refuses;
// the unchanged experiment runs.
func TestPauseDrillStopsAnExperimentThatDiffersFromTheCheck_FakeFIS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(e *fistypes.Experiment, arn string)
		want string
	}{
		{"another table", func(e *fistypes.Experiment, arn string) {
			e.Targets["Tables"] = fistypes.ExperimentTarget{ResourceArns: []string{arn + "-other"}}
		}, "targets " + "arn:"},
		{"another account", func(e *fistypes.Experiment, arn string) {
			e.Targets["Tables"] = fistypes.ExperimentTarget{ResourceArns: []string{strings.Replace(arn, ":"+emulatorAccount+":", ":999999999999:", 1)}}
		}, "account 999999999999"},
		{"an action added", func(e *fistypes.Experiment, arn string) {
			e.Actions["more"] = fistypes.ExperimentAction{ActionId: aws.String(failover.PauseActionID)}
		}, "the template changed between the check and the start"},
		{"another template", func(e *fistypes.Experiment, arn string) { e.ExperimentTemplateId = aws.String("EXTother") }, `started from template "EXTother"`},
		{"no targets returned", func(e *fistypes.Experiment, arn string) { e.Targets = nil }, "the template changed between the check and the start"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, f, req := pauseFixture(t, failover.PauseActionID, func(a string) string { return a })
			f.startedAs = func(e *fistypes.Experiment) { c.edit(e, f.tableARN) }
			res, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
			require.ErrorIs(t, err, failover.ErrTemplateRefused)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "experiment EXPfake stopped at once")
			assert.Equal(t, 1, f.started)
			assert.Equal(t, 1, f.stopped, "the experiment is stopped at once")
			assert.False(t, res.OK)
			last := res.Steps[len(res.Steps)-1]
			assert.Equal(t, "start-experiment", last.Name)
			assert.Equal(t, failover.StepFailed, last.Status)
		})
	}
}

// TestPauseDrillStopsTheExperimentOnEveryWayOut: when the pause never
// shows (a template that does not reach the table) the drill fails at that
// step and stops the experiment; when the drill is interrupted (Ctrl-C) the
// experiment is stopped too.
func TestPauseDrillStopsTheExperimentOnEveryWayOut(t *testing.T) {
	t.Parallel()
	t.Run("no pause seen", func(t *testing.T) {
		p, f, req := pauseFixture(t, failover.PauseActionID, func(a string) string { return a })
		f.noPause = true
		req.Timeout = 300 * time.Millisecond
		res, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the pause statement on "+p.Table+" in "+away+": not done after")
		assert.Contains(t, err.Error(), "(--pause-timeout)", "the timeout names the flag that bounds it")
		assert.Equal(t, failover.StepFailed, res.Steps[len(res.Steps)-1].Status)
		assert.Equal(t, 1, f.stopped, "the experiment is stopped")
	})
	t.Run("interrupted", func(t *testing.T) {
		p, f, req := pauseFixture(t, failover.PauseActionID, func(a string) string { return a })
		f.alarm = "" // the alarm never fires: the drill waits until cancelled
		ctx, cancel := context.WithCancel(context.Background())
		r := p.runner(new([]string))
		r.OnStep = func(s failover.Step) {
			if s.Name == "preflight-refuses" {
				cancel()
			}
		}
		_, err := r.PauseDrill(ctx, f, f.cw, req)
		require.ErrorIs(t, err, context.Canceled)
		assert.GreaterOrEqual(t, f.stopped, 1, "an interrupted drill stops its experiment")
		doc, _ := policyOf(t, p, away)
		assert.Empty(t, failover.ReplicationPauses(doc), "and the pause is gone")
	})
}

// TestPauseDrillRefusesAFencedTable (issue 44): a DR fence (a resource
// policy the emulator stores) on the table in either region refuses the
// drill before any experiment starts, in a dry run too, naming the region
// and the fence's statement.
func TestPauseDrillRefusesAFencedTable(t *testing.T) {
	t.Parallel()
	for _, region := range []string{home, away} {
		for _, execute := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s execute=%v", region, execute), func(t *testing.T) {
				p, f, req := pauseFixture(t, failover.PauseActionID, func(a string) string { return a })
				req.Execute = execute
				_, arn := policyOf(t, p, region)
				doc, err := failover.WithFence("", arn, "")
				require.NoError(t, err)
				_, err = p.DynamoDB(region).PutResourcePolicy(context.Background(), &dynamodb.PutResourcePolicyInput{ResourceArn: &arn, Policy: &doc})
				require.NoError(t, err)
				res, err := p.runner(new([]string)).PauseDrill(context.Background(), f, f.cw, req)
				require.Error(t, err)
				assert.Contains(t, err.Error(), p.Table+" in "+region+" carries a fence (statement "+failover.FenceSid+")")
				assert.Zero(t, f.started, "nothing started")
				assert.False(t, res.OK)
				got, _ := policyOf(t, p, region)
				assert.True(t, failover.HasFence(got), "the fence stays")
			})
		}
	}
}

// listFIS is a fake at the FIS SDK interface for ListExperiments: moto has
// no ListExperiments (measured: it answers 404), so which experiments run is
// the fake's; the table, its fence and the pointer are the emulator's.
type listFIS struct {
	experiments []fistypes.ExperimentSummary
	err         error
	asked       []string
}

func (l *listFIS) ListExperiments(_ context.Context, in *fis.ListExperimentsInput, _ ...func(*fis.Options)) (*fis.ListExperimentsOutput, error) {
	l.asked = append(l.asked, aws.ToString(in.ExperimentTemplateId))
	if l.err != nil {
		return nil, l.err
	}
	return &fis.ListExperimentsOutput{Experiments: l.experiments}, nil
}

func experimentOf(template string, status fistypes.ExperimentStatus) fistypes.ExperimentSummary {
	return fistypes.ExperimentSummary{Id: aws.String("EXP" + string(status)), ExperimentTemplateId: aws.String(template), State: &fistypes.ExperimentState{Status: status}}
}

// TestFailoverRefusesWhileThePauseExperimentRuns_FakeFIS (issue 44): with
// the env's pause template named, a failover into the region refuses while
// an experiment of it is pending, initiating or running there (before the
// pause statement is on the replica), and when the experiments cannot be
// listed; it changes nothing (no fence, the pointer stays). A finished
// experiment or another template's does not refuse.
func TestFailoverRefusesWhileThePauseExperimentRuns_FakeFIS(t *testing.T) {
	t.Parallel()
	const template = "EXTpause"
	for _, c := range []struct {
		name    string
		fis     *listFIS
		refused string
	}{
		{"running", &listFIS{experiments: []fistypes.ExperimentSummary{experimentOf(template, fistypes.ExperimentStatusRunning)}}, "the pause experiment of template EXTpause runs in " + away + ": EXPrunning (running)"},
		{"initiating", &listFIS{experiments: []fistypes.ExperimentSummary{experimentOf(template, fistypes.ExperimentStatusInitiating)}}, "EXPinitiating (initiating)"},
		{"pending", &listFIS{experiments: []fistypes.ExperimentSummary{experimentOf(template, fistypes.ExperimentStatusPending)}}, "EXPpending (pending)"},
		{"cannot list", &listFIS{err: errors.New("AccessDeniedException: not authorized to perform fis:ListExperiments")}, "cannot list the AWS FIS experiments of template EXTpause in " + away},
		{"completed", &listFIS{experiments: []fistypes.ExperimentSummary{experimentOf(template, fistypes.ExperimentStatusCompleted)}}, ""},
		{"another template", &listFIS{experiments: []fistypes.ExperimentSummary{experimentOf("EXTother", fistypes.ExperimentStatusRunning)}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newPair(t, false)
			r := p.runner(new([]string))
			r.Clients = func(region string) failover.Clients {
				cl := p.Clients(region)
				if region == away {
					cl.FIS = c.fis
				}
				return cl
			}
			req := p.request(failover.Failover, "", away, true)
			req.PauseTemplate = template
			res, err := r.Run(context.Background(), req)
			var check failover.Check
			for _, ch := range res.Checks {
				if ch.Name == "pause-experiment" {
					check = ch
				}
			}
			assert.Equal(t, []string{template}, c.fis.asked, "ListExperiments of the template, in %s", away)
			if c.refused == "" {
				assert.Equal(t, failover.CheckOK, check.Status, check.Detail)
				return
			}
			require.ErrorIs(t, err, failover.ErrRefused)
			assert.Equal(t, failover.CheckFail, check.Status)
			assert.Contains(t, check.Detail, c.refused)
			assert.Contains(t, err.Error(), c.refused)
			p.AssertUnchanged(t)
		})
	}
}

// TestFailoverPauseCheckOnTheEmulatorFailsClosed: the real FIS client
// against moto, which has no ListExperiments: a failover that names the
// pause template refuses (it cannot tell), and one that does not is not asked.
func TestFailoverPauseCheckOnTheEmulatorFailsClosed(t *testing.T) {
	t.Parallel()
	p := newPair(t, false)
	req := p.request(failover.Failover, "", away, false)
	req.PauseTemplate = "EXTpause"
	_, err := p.runner(new([]string)).Run(context.Background(), req)
	require.ErrorIs(t, err, failover.ErrRefused)
	assert.Contains(t, err.Error(), "pause-experiment: cannot list the AWS FIS experiments of template EXTpause in "+away)
	req.PauseTemplate = ""
	res, err := p.runner(new([]string)).Run(context.Background(), req)
	require.NoError(t, err, "%+v", res.Checks)
}
