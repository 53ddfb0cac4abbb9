package failover

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/fis"
	fistypes "github.com/aws/aws-sdk-go-v2/service/fis/types"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/poll"
)

// FIS is the part of the AWS FIS API the pause drill uses, in the region
// of the experiment template (modules/dr output
// fis_pause_replication_template_id).
type FIS interface {
	GetExperimentTemplate(context.Context, *fis.GetExperimentTemplateInput, ...func(*fis.Options)) (*fis.GetExperimentTemplateOutput, error)
	StartExperiment(context.Context, *fis.StartExperimentInput, ...func(*fis.Options)) (*fis.StartExperimentOutput, error)
	GetExperiment(context.Context, *fis.GetExperimentInput, ...func(*fis.Options)) (*fis.GetExperimentOutput, error)
	StopExperiment(context.Context, *fis.StopExperimentInput, ...func(*fis.Options)) (*fis.StopExperimentOutput, error)
}

// Alarms reads the state of the replication-latency alarm.
type Alarms interface {
	DescribeAlarms(context.Context, *cloudwatch.DescribeAlarmsInput, ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error)
}

// PauseActionID is the AWS FIS action that pauses a global table's
// replication into the replica it targets (resource type
// aws:dynamodb:global-table, target key Tables, parameter duration).
const PauseActionID = "aws:dynamodb:global-table-pause-replication"

// PauseDrillRequest is a drill that breaks replication on purpose: an AWS
// FIS experiment pauses replication into Region for the template's
// duration, and the drill checks that dynops sees it.
type PauseDrillRequest struct {
	Target Target
	// Template is the experiment template's ID; Region is its region (the
	// replica whose replication it pauses).
	Template, Region string
	// Account is the caller's account (sts:GetCallerIdentity): every target
	// ARN of the template and of the experiment must be in it ("": refused).
	Account string
	// Alarm is the ReplicationLatency alarm that must fire ("": not checked).
	Alarm string
	// Rules are the failover preflight's (its mode and regions are the
	// drill's: a failover into Region).
	Rules Rules
	// Execute starts the experiment; false: the plan only.
	Execute bool
	// KeepRunning leaves the experiment to its own end instead of
	// stopping it once every check has its answer.
	KeepRunning bool
	// Timeout bounds each wait (the experiment's start, the pause, the
	// alarm, the end); Poll is how often they ask.
	Timeout, Poll time.Duration
}

// PauseDrillResult is what the drill saw, step by step.
type PauseDrillResult struct {
	Table      string `json:"table"`
	Region     string `json:"region"`
	Template   string `json:"experiment_template"`
	Experiment string `json:"experiment,omitempty"`
	DryRun     bool   `json:"dry_run"`
	OK         bool   `json:"ok"`
	Steps      []Step `json:"steps"`
	// Refused is what the failover preflight said while replication was paused.
	Refused []string `json:"preflight_refused,omitempty"`
	// AlarmFired is nil when no alarm was checked.
	AlarmFired *bool `json:"alarm_fired,omitempty"`
}

// PauseDrill runs the drill: check the template (it must pause this table
// in Region and nothing else), start the experiment, wait until the pause
// shows in the replica's resource policy, run the failover preflight into
// Region (it must refuse: replication-paused), wait for the alarm, then stop
// the experiment and wait until the pause is gone. It stops at the first
// step that fails; the experiment is stopped on every way out once started.
func (r *Runner) PauseDrill(ctx context.Context, f FIS, alarms Alarms, req PauseDrillRequest) (PauseDrillResult, error) {
	res := PauseDrillResult{Table: req.Target.Table, Region: req.Region, Template: req.Template, DryRun: !req.Execute}
	every := req.Poll
	if every <= 0 {
		every = r.pollInterval()
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	run := func(name, plan string, fn func(st *Step) error) error {
		st := Step{Name: name, Plan: plan, Status: StepNotRun}
		if !req.Execute && name != "check-template" {
			res.Steps = append(res.Steps, st)
			return nil
		}
		start := r.Now()
		err := fn(&st)
		st.Duration = r.Now().Sub(start)
		st.Status = StepDone
		if err != nil {
			st.Status, st.Detail = StepFailed, err.Error()
		}
		res.Steps = append(res.Steps, st)
		if r.OnStep != nil {
			r.OnStep(st)
		}
		if r.Record != nil {
			r.Record(audit.DRStepAction("drill --pause-replication", name), req.Target.Table, st)
		}
		return err
	}
	// waitFor asks cond every poll (the one poller) until it says done,
	// the timeout passes or ctx ends.
	waitFor := func(what string, cond func() (bool, error)) error {
		return poll.Until(ctx, poll.Options{Interval: every, Timeout: timeout, What: what, Flag: "--pause-timeout", Now: r.Now},
			func(context.Context) (bool, string, error) {
				done, err := cond()
				return done, "", err
			})
	}

	var checked experimentShape
	err := run("check-template", "read "+req.Target.Table+"'s resource policy in every region (no fence may be on it) and experiment template "+req.Template+": it must pause "+req.Target.Table+" in "+req.Region+" and nothing else", func(st *Step) error {
		if err := noFence(Inspect(ctx, r.Clients, req.Target, time.Hour, r.Now())); err != nil {
			return err
		}
		var err error
		checked, err = checkTemplate(ctx, f, req)
		return err
	})
	if err != nil {
		return res, err
	}
	var id string
	stop := func() {
		if id == "" {
			return
		}
		// A fresh context: the drill's may be cancelled (Ctrl-C), and a
		// pause left running is what an interrupted drill must not leave.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = f.StopExperiment(sctx, &fis.StopExperimentInput{Id: aws.String(id)})
	}
	err = run("start-experiment", "start an experiment from "+req.Template+" (replication into "+req.Region+" pauses)", func(st *Step) error {
		out, err := f.StartExperiment(ctx, &fis.StartExperimentInput{ExperimentTemplateId: aws.String(req.Template),
			ClientToken: aws.String(fmt.Sprintf("dynops-drill-%d", r.Now().UnixNano())),
			Tags:        map[string]string{"dynops": "dr-drill", "table": req.Target.Table}})
		if err != nil {
			return fmt.Errorf("starting the experiment from template %s in %s: %w", req.Template, req.Region, err)
		}
		if out.Experiment != nil {
			id = aws.ToString(out.Experiment.Id)
		}
		res.Experiment = id
		st.Detail = "experiment " + id
		st.Undo = []string{"aws fis stop-experiment --region " + req.Region + " --id " + id}
		if err := checkStarted(out.Experiment, checked, req); err != nil {
			return fmt.Errorf("%w; experiment %s stopped at once", err, id)
		}
		return waitFor("the experiment running", func() (bool, error) { return experimentIs(ctx, f, id, fistypes.ExperimentStatusRunning) })
	})
	if err != nil {
		stop()
		return res, err
	}
	defer func() {
		if !req.KeepRunning {
			stop()
		}
	}()
	var paused State
	err = run("pause-seen", "read "+req.Target.Table+"'s resource policy in "+req.Region+" until the pause statement shows", func(st *Step) error {
		return waitFor("the pause statement on "+req.Target.Table+" in "+req.Region, func() (bool, error) {
			paused = Inspect(ctx, r.Clients, req.Target, time.Hour, r.Now())
			rs, ok := paused.Region(req.Region)
			if !ok {
				return false, fmt.Errorf("%s is not a region of %s", req.Region, req.Target.Table)
			}
			ps := ReplicationPauses(rs.Policy)
			if len(ps) > 0 {
				st.Detail = fmt.Sprintf("statement %s until %s", ps[0].Sid, ps[0].Until)
			}
			return len(ps) > 0, nil
		})
	})
	if err != nil {
		return res, err
	}
	err = run("preflight-refuses", "a failover into "+req.Region+" now: the preflight must refuse it (replication-paused)", func(st *Step) error {
		rules := req.Rules
		rules.Mode, rules.From, rules.To, rules.FromGiven = Failover, paused.Active, req.Region, true
		if rules.From == req.Region || rules.From == "" {
			rules.From = otherRegion(req.Target.Regions, req.Region)
		}
		checks := Preflight(paused, rules)
		res.Refused = Refused(checks)
		for _, c := range checks {
			if c.Name == "replication-paused" && c.Status == CheckFail {
				st.Detail = c.Detail
				return nil
			}
		}
		return fmt.Errorf("the failover preflight into %s did not refuse while replication was paused: %s", req.Region, strings.Join(res.Refused, "; "))
	})
	if err != nil {
		return res, err
	}
	if req.Alarm != "" {
		fired := false
		res.AlarmFired = &fired
		err = run("alarm-fires", "wait for alarm "+req.Alarm+" to be in ALARM", func(st *Step) error {
			return waitFor("alarm "+req.Alarm+" in ALARM", func() (bool, error) {
				out, err := alarms.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{req.Alarm}})
				if err != nil {
					return false, fmt.Errorf("reading alarm %s: %w", req.Alarm, err)
				}
				if len(out.MetricAlarms) == 0 {
					return false, fmt.Errorf("no alarm named %s in %s (modules/dynamodb-alarms names it TABLE-replication-latency-REGION)", req.Alarm, req.Region)
				}
				fired = out.MetricAlarms[0].StateValue == cwtypes.StateValueAlarm
				return fired, nil
			})
		})
		if err != nil {
			return res, err
		}
	}
	if req.KeepRunning {
		res.OK = true
		return res, nil
	}
	err = run("stop-experiment", "stop the experiment and wait until the pause statement is gone", func(st *Step) error {
		stop()
		if err := waitFor("the experiment ended", func() (bool, error) {
			return experimentIs(ctx, f, id, fistypes.ExperimentStatusStopped, fistypes.ExperimentStatusCompleted)
		}); err != nil {
			return err
		}
		return waitFor("the pause statement removed", func() (bool, error) {
			s := Inspect(ctx, r.Clients, req.Target, time.Hour, r.Now())
			rs, _ := s.Region(req.Region)
			return len(ReplicationPauses(rs.Policy)) == 0, nil
		})
	})
	res.OK = err == nil
	return res, err
}

// pauseExperimentCheck is the preflight's "pause-experiment" check of a
// failover into region: it fails while an experiment of the env's pause
// template is pending, initiating or running there (the pause statement may
// not be on the replica yet, or may come back), and when the experiments
// cannot be listed (fail closed: the flag asked for the check).
func pauseExperimentCheck(ctx context.Context, f Experiments, template, region string) Check {
	c := Check{Name: "pause-experiment", Status: CheckOK}
	if f == nil {
		c.Status, c.Detail = CheckFail, "no AWS FIS client for "+region+": cannot tell whether an experiment of "+template+" runs"
		return c
	}
	var running []string
	in := &fis.ListExperimentsInput{ExperimentTemplateId: aws.String(template)}
	for {
		out, err := f.ListExperiments(ctx, in)
		if err != nil {
			c.Status, c.Detail = CheckFail, fmt.Sprintf("cannot list the AWS FIS experiments of template %s in %s (fis:ListExperiments): %v; a failover with --pause-template refuses until it can tell that none runs", template, region, err)
			return c
		}
		for _, e := range out.Experiments {
			if aws.ToString(e.ExperimentTemplateId) != template || e.State == nil {
				continue
			}
			switch e.State.Status {
			case fistypes.ExperimentStatusPending, fistypes.ExperimentStatusInitiating, fistypes.ExperimentStatusRunning:
				running = append(running, fmt.Sprintf("%s (%s)", aws.ToString(e.Id), e.State.Status))
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if len(running) > 0 {
		c.Status = CheckFail
		c.Detail = fmt.Sprintf("the pause experiment of template %s runs in %s: %s; replication into %s is or will be paused: wait for its end or stop it (aws fis stop-experiment --region %s --id ID)", template, region, strings.Join(running, ", "), region, region)
		return c
	}
	c.Detail = "no experiment of " + template + " runs in " + region
	return c
}

// noFence refuses a drill on a table a fence is on, or whose policy a
// region cannot show: a fence is a failover's (or a migration's) state,
// which a drill must not disturb, and the pause statement is written by the
// same resource-policy actions that could lift it.
func noFence(s State) error {
	for _, rs := range s.Regions {
		arn := s.Target.Table + " in " + rs.Region
		switch {
		case !rs.Answers || rs.PolicyError != "":
			why := rs.Error
			if rs.PolicyError != "" {
				why = rs.PolicyError
			}
			return fmt.Errorf("cannot tell whether %s is fenced (%s): a pause drill starts only on a table with no fence in any region; run it again when every region answers", arn, why)
		case rs.Fenced || HasFence(rs.Policy):
			sid := rs.FenceSid
			if sid == "" {
				sid = FenceSidOf(rs.Policy)
			}
			if sid == "" {
				sid = rs.FenceDetail
			}
			return fmt.Errorf("%s carries a fence (statement %s): a pause drill does not run on a fenced table; see `dynops dr status --table %s`, and fail back (`dynops dr failback`) or end the migration before the drill", arn, sid, s.Target.Table)
		}
	}
	return nil
}

// ErrTemplateRefused marks a pause drill refused for what its experiment
// template (or the experiment started from it) would do: another action,
// table, region or account. Nothing is left running (a started experiment
// is stopped at once); the command exits 2.
var ErrTemplateRefused = errors.New("pause drill refused")

// experimentShape is what a pause drill checks of a template and of the
// experiment started from it: the actions, the target ARNs, whether a target
// selects by tag or filter, and whether it reaches other accounts.
type experimentShape struct {
	actions      map[string]string   // action name -> action ID
	targets      map[string][]string // target name -> resource ARNs
	selected     []string            // targets that select by tag or filter
	multiAccount bool
}

// selection is what a drill reads of one target: its ARNs and how many
// tag or filter selectors it adds.
type selection struct {
	arns      []string
	selectors int
}

// shapeOf reads the shape of a template or an experiment (their SDK types
// differ, their fields do not).
func shapeOf[A, T any](actions map[string]A, actionID func(A) *string, targets map[string]T, sel func(T) selection, accounts *int64, multi bool) experimentShape {
	s := experimentShape{actions: map[string]string{}, targets: map[string][]string{}}
	for name, a := range actions {
		s.actions[name] = aws.ToString(actionID(a))
	}
	for name, tg := range targets {
		t := sel(tg)
		s.targets[name] = t.arns
		if len(t.arns) == 0 || t.selectors > 0 {
			s.selected = append(s.selected, name)
		}
	}
	s.multiAccount = aws.ToInt64(accounts) > 0 || multi
	return s
}

func templateShape(t *fistypes.ExperimentTemplate) experimentShape {
	return shapeOf(t.Actions, func(a fistypes.ExperimentTemplateAction) *string { return a.ActionId },
		t.Targets, func(tg fistypes.ExperimentTemplateTarget) selection {
			return selection{tg.ResourceArns, len(tg.ResourceTags) + len(tg.Filters)}
		},
		t.TargetAccountConfigurationsCount, t.ExperimentOptions != nil && t.ExperimentOptions.AccountTargeting == fistypes.AccountTargetingMultiAccount)
}

func experimentShapeOf(e *fistypes.Experiment) experimentShape {
	return shapeOf(e.Actions, func(a fistypes.ExperimentAction) *string { return a.ActionId },
		e.Targets, func(tg fistypes.ExperimentTarget) selection {
			return selection{tg.ResourceArns, len(tg.ResourceTags) + len(tg.Filters)}
		},
		e.TargetAccountConfigurationsCount, e.ExperimentOptions != nil && e.ExperimentOptions.AccountTargeting == fistypes.AccountTargetingMultiAccount)
}

// refuse says what of s a pause drill of req does not run; what names the
// source ("experiment template EXT..." or "experiment EXP...").
func (s experimentShape) refuse(req PauseDrillRequest, what string) error {
	if len(s.actions) == 0 {
		return fmt.Errorf("%w: %s has no actions", ErrTemplateRefused, what)
	}
	if s.multiAccount {
		return fmt.Errorf("%w: %s targets other accounts (multi-account experiment options or target account configurations): a pause drill runs in the caller's account %s only", ErrTemplateRefused, what, req.Account)
	}
	for _, name := range slices.Sorted(maps.Keys(s.actions)) {
		if id := s.actions[name]; id != PauseActionID {
			return fmt.Errorf("%w: %s action %s is %s: a pause drill runs only %s (modules/dr output fis_pause_replication_template_id)", ErrTemplateRefused, what, name, id, PauseActionID)
		}
	}
	if len(s.selected) > 0 {
		slices.Sort(s.selected)
		return fmt.Errorf("%w: %s target %s selects tables by tag or filter: a drill needs the table's ARN named", ErrTemplateRefused, what, s.selected[0])
	}
	for _, name := range slices.Sorted(maps.Keys(s.targets)) {
		for _, a := range s.targets[name] {
			if err := req.checkTableARN(a); err != nil {
				return fmt.Errorf("%w: %s targets %s: %v", ErrTemplateRefused, what, a, err)
			}
		}
	}
	return nil
}

// checkTableARN refuses an ARN that is not the drill's table in its region
// and the caller's account (fail closed: an unknown account refuses).
func (req PauseDrillRequest) checkTableARN(s string) error {
	a, err := arn.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not an ARN (%v)", err)
	case a.Service != "dynamodb" || a.Resource != "table/"+req.Target.Table:
		return fmt.Errorf("the drill is of table %s (arn:%s:dynamodb:%s:%s:table/%s)", req.Target.Table, a.Partition, req.Region, req.Account, req.Target.Table)
	case a.Region != req.Region:
		return fmt.Errorf("region %s: the drill is of %s in %s", a.Region, req.Target.Table, req.Region)
	case req.Account == "":
		return fmt.Errorf("the caller's account is unknown (sts:GetCallerIdentity): a drill starts only on a template whose targets are in the caller's account")
	case a.AccountID != req.Account:
		return fmt.Errorf("account %s: the drill runs in the caller's account %s (sts:GetCallerIdentity); a template of another account's table is refused", a.AccountID, req.Account)
	}
	return nil
}

// equal tells whether two shapes run the same actions on the same ARNs.
func (s experimentShape) equal(o experimentShape) bool {
	if !maps.Equal(s.actions, o.actions) || len(s.targets) != len(o.targets) || s.multiAccount != o.multiAccount {
		return false
	}
	for name, arns := range s.targets {
		other, ok := o.targets[name]
		if !ok || !slices.Equal(slices.Sorted(slices.Values(arns)), slices.Sorted(slices.Values(other))) {
			return false
		}
	}
	return true
}

// checkTemplate refuses a template that does anything but pause this
// table's replication in the drill's region and the caller's account: a
// drill must break exactly what it says. It returns what it checked, which
// the experiment started from it must match.
func checkTemplate(ctx context.Context, f FIS, req PauseDrillRequest) (experimentShape, error) {
	out, err := f.GetExperimentTemplate(ctx, &fis.GetExperimentTemplateInput{Id: aws.String(req.Template)})
	if err != nil {
		return experimentShape{}, fmt.Errorf("reading experiment template %s in %s: %w", req.Template, req.Region, err)
	}
	if out.ExperimentTemplate == nil {
		return experimentShape{}, fmt.Errorf("%w: experiment template %s has no actions", ErrTemplateRefused, req.Template)
	}
	s := templateShape(out.ExperimentTemplate)
	return s, s.refuse(req, "experiment template "+req.Template)
}

// checkStarted closes the gap between reading the template and starting
// it (StartExperiment takes a template ID, not a version): the experiment
// StartExperiment returns carries the actions and targets it runs, which
// must be the template's as checked, from the same template, and pass the
// same checks. Otherwise the caller stops it at once.
func checkStarted(e *fistypes.Experiment, checked experimentShape, req PauseDrillRequest) error {
	if e == nil {
		return fmt.Errorf("%w: StartExperiment returned no experiment to compare with template %s", ErrTemplateRefused, req.Template)
	}
	what := "experiment " + aws.ToString(e.Id)
	if id := aws.ToString(e.ExperimentTemplateId); id != req.Template {
		return fmt.Errorf("%w: %s was started from template %q, not %s", ErrTemplateRefused, what, id, req.Template)
	}
	got := experimentShapeOf(e)
	if err := got.refuse(req, what); err != nil {
		return err
	}
	if !got.equal(checked) {
		return fmt.Errorf("%w: %s runs %v on %v, but template %s was checked with %v on %v: the template changed between the check and the start", ErrTemplateRefused, what, got.actions, got.targets, req.Template, checked.actions, checked.targets)
	}
	return nil
}

// experimentIs tells whether the experiment is in one of want; a failed or
// cancelled experiment is an error naming its reason.
func experimentIs(ctx context.Context, f FIS, id string, want ...fistypes.ExperimentStatus) (bool, error) {
	out, err := f.GetExperiment(ctx, &fis.GetExperimentInput{Id: aws.String(id)})
	if err != nil {
		return false, fmt.Errorf("reading experiment %s: %w", id, err)
	}
	if out.Experiment == nil || out.Experiment.State == nil {
		return false, errors.New("experiment " + id + " has no state")
	}
	st := out.Experiment.State.Status
	for _, w := range want {
		if st == w {
			return true, nil
		}
	}
	switch st {
	case fistypes.ExperimentStatusFailed, fistypes.ExperimentStatusCancelled:
		return false, fmt.Errorf("experiment %s %s: %s", id, st, aws.ToString(out.Experiment.State.Reason))
	case fistypes.ExperimentStatusStopped, fistypes.ExperimentStatusCompleted:
		return false, fmt.Errorf("experiment %s ended (%s) before the drill saw what it checks: %s", id, st, aws.ToString(out.Experiment.State.Reason))
	}
	return false, nil
}

// otherRegion is a region of regions that is not r.
func otherRegion(regions []string, r string) string {
	for _, x := range regions {
		if x != r {
			return x
		}
	}
	return ""
}
