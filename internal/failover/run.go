package failover

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dynops/dynops/internal/audit"
)

// Request is one switch of writes between regions.
type Request struct {
	Target Target
	Rules  Rules
	// BreakGlassRoleARN may still write in a fenced region ("" fences everyone).
	BreakGlassRoleARN string
	// ReplicationTimeout bounds the wait for the canary to show in the old region.
	ReplicationTimeout time.Duration
	// Execute runs the steps; false prints the plan (a dry run).
	Execute bool
	// PauseTemplate is the env's AWS FIS pause experiment template
	// (modules/dr output fis_pause_replication_template_id, in the target
	// region): a failover refuses while an experiment of it runs. "": not asked.
	PauseTemplate string
}

// StepStatus is how a step ended.
type StepStatus string

// Step outcomes.
const (
	StepDone    StepStatus = "done"
	StepPlanned StepStatus = "planned" // dry run
	StepSkipped StepStatus = "skipped" // could not or need not run; Detail says why
	StepFailed  StepStatus = "failed"
	StepNotRun  StepStatus = "not-run" // an earlier step failed
)

// Step is one named step of a switch and how it went.
type Step struct {
	Mode     Mode          `json:"-"` // the switch the step belongs to (a drill runs two)
	Name     string        `json:"name"`
	Plan     string        `json:"plan"`
	Status   StepStatus    `json:"status"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Undo are the commands that revert what the step changed, in order.
	Undo []string `json:"undo,omitempty"`
	// Data is what the step decided on, for the audit record (the drain's plan).
	Data any `json:"data,omitempty"`
}

// Result is the outcome of a switch.
type Result struct {
	Mode     Mode          `json:"mode"`
	Table    string        `json:"table"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	DryRun   bool          `json:"dry_run"`
	OK       bool          `json:"ok"`
	Checks   []Check       `json:"preflight"`
	Steps    []Step        `json:"steps"`
	Error    string        `json:"error,omitempty"`
	Rollback []string      `json:"rollback,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	State    State         `json:"state"`
	// Drain is the wait between the fence and the flip, with the metric
	// values it came from (nil when the preflight did not get that far).
	Drain *DrainPlan `json:"drain,omitempty"`
}

// Runner runs switches.
type Runner struct {
	Clients Regional
	Route53 Route53 // used only when the target has health checks
	Now     func() time.Time
	// Record notes a change (or a planned one, in a dry run) in the audit log.
	Record func(what, target string, detail any)
	// OnStep is told of every step as it ends, for printing.
	OnStep func(Step)
	// BeforeStep runs before each step when set; an error fails that step.
	// It is the seam tests use to fail step N and check what is reported.
	BeforeStep func(name string) error
	// PollInterval is how often the old region is asked for the canary (default 2s).
	PollInterval time.Duration
	// Sleep waits during the drain (default: a timer); tests pass a clock
	// they drive, so that a drain of minutes takes none.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnWait is told of the drain's progress: waited of total.
	OnWait func(waited, total time.Duration)
}

// ErrRefused is returned when the preflight refuses a switch.
var ErrRefused = errors.New("preflight refused the switch")

// stepDef is a step before it runs.
type stepDef struct {
	name string
	plan string
	data any // Step.Data, for the audit record, whether the step runs or is planned
	run  func(ctx context.Context, st *Step) error
}

// Run switches writes from req.Rules.From (default: the region the pointer
// names) to req.Rules.To. A dry run inspects, runs the preflight and reports
// the plan. The error is non-nil when the switch was refused or a step failed;
// the Result then says what changed and how to roll it back.
func (r *Runner) Run(ctx context.Context, req Request) (Result, error) {
	start := r.Now()
	res := Result{Mode: req.Rules.Mode, Table: req.Target.Table, To: req.Rules.To, DryRun: !req.Execute}

	if req.Target.BreakGlassRoleARN == "" {
		req.Target.BreakGlassRoleARN = req.BreakGlassRoleARN // the fence read back exempts it
	}
	pre := Step{Name: "preflight", Plan: "inspect every region and check the switch is safe"}
	t0 := r.Now()
	err := r.before(pre.Name)
	if err == nil {
		res.State = Inspect(ctx, r.Clients, req.Target, req.Rules.Window, start)
		if req.Rules.From == "" {
			req.Rules.From, req.Rules.Resume = defaultFrom(res.State, req.Rules)
		}
		res.From = req.Rules.From
		if req.Rules.To == "" {
			req.Rules.To = defaultTo(res.State, req.Rules)
			res.To = req.Rules.To
		}
		switch {
		case req.Rules.To == "":
			res.Checks = []Check{{Name: "target-table", Status: CheckFail, Detail: ambiguousTo(res.State, req.Rules)}}
		case req.Rules.From == "" && res.State.Active == req.Rules.To:
			res.Checks = []Check{{Name: "old-region", Status: CheckFail, Detail: ambiguousFrom(res.State, req.Rules)}}
		case req.Rules.From == "":
			res.Checks = []Check{{Name: "pointer", Status: CheckFail, Detail: fmt.Sprintf("%s does not name one region everywhere (%s): pass --from with the region that takes writes", req.Target.Pointer, describePointers(res.State))}}
		default:
			if req.Rules.Drain == (DrainRules{}) {
				req.Rules.Drain = DefaultDrainRules()
			}
			plan, check := PlanDrain(res.State, req.Rules)
			res.Drain = &plan
			res.Checks = append(append(Preflight(res.State, req.Rules), fenceChecks(res.State, req)...), check)
			if req.Rules.Mode == Failover && req.PauseTemplate != "" {
				res.Checks = append(res.Checks, pauseExperimentCheck(ctx, r.Clients(req.Rules.To).FIS, req.PauseTemplate, req.Rules.To))
			}
		}
		if why := Refused(res.Checks); len(why) > 0 {
			err = fmt.Errorf("%w: %s", ErrRefused, strings.Join(why, "; "))
		}
	}
	pre.Duration = r.Now().Sub(t0)
	defs := r.steps(req, res.State, res.Drain)
	if err != nil {
		pre.Status, pre.Detail = StepFailed, err.Error()
		r.finish(&res, pre, req)
		for _, d := range defs {
			r.finish(&res, Step{Name: d.name, Plan: d.plan, Status: StepNotRun}, req)
		}
		res.Error = err.Error()
		res.Rollback = []string{"nothing was changed: the preflight runs before any step"}
		res.Duration = r.Now().Sub(start)
		return res, err
	}
	pre.Status, pre.Detail = StepDone, summary(res.Checks)
	r.finish(&res, pre, req)

	var failed error
	for _, d := range defs {
		st := Step{Name: d.name, Plan: d.plan, Data: d.data}
		switch {
		case failed != nil:
			st.Status = StepNotRun
		case !req.Execute:
			st.Status = StepPlanned
		default:
			t0 := r.Now()
			err := r.before(d.name)
			if err == nil {
				st.Status = StepDone
				err = d.run(ctx, &st)
			}
			st.Duration = r.Now().Sub(t0)
			if err != nil {
				st.Status, st.Detail = StepFailed, err.Error()
				failed = fmt.Errorf("step %s failed: %w", d.name, err)
			}
		}
		r.finish(&res, st, req)
	}
	res.Duration = r.Now().Sub(start)
	if failed != nil {
		res.Error = failed.Error()
		res.Rollback = rollback(res, req)
		return res, failed
	}
	res.OK = true
	return res, nil
}

func (r *Runner) before(name string) error {
	if r.BeforeStep == nil {
		return nil
	}
	return r.BeforeStep(name)
}

func (r *Runner) finish(res *Result, st Step, req Request) {
	st.Mode = req.Rules.Mode
	res.Steps = append(res.Steps, st)
	if st.Status != StepNotRun && r.Record != nil {
		detail := map[string]any{"status": st.Status, "plan": st.Plan, "detail": st.Detail, "from": res.From, "to": res.To, "undo": st.Undo}
		if st.Data != nil {
			detail["data"] = st.Data
		}
		r.Record(audit.DRStepAction(string(req.Rules.Mode), st.Name), req.Target.Table, detail)
	}
	if r.OnStep != nil {
		r.OnStep(st)
	}
}

func summary(checks []Check) string {
	n := map[CheckStatus]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d checks: %d ok, %d warn, %d skipped", len(checks), n[CheckOK], n[CheckWarn], n[CheckSkipped])
}

// rollback lists the undo commands of every step that changed something,
// last change first, then the dynops command that does the same.
func rollback(res Result, req Request) []string {
	var cmds []string
	for i := len(res.Steps) - 1; i >= 0; i-- {
		if st := res.Steps[i]; st.Status == StepDone || st.Status == StepFailed {
			for j := len(st.Undo) - 1; j >= 0; j-- {
				cmds = append(cmds, st.Undo[j])
			}
		}
	}
	if len(cmds) == 0 {
		return []string{"nothing was changed before the failure"}
	}
	if req.Rules.Mode == Failover {
		cmds = append(cmds, fmt.Sprintf("or, all of the above with dynops: dynops dr failback %s --to %s --from %s --yes", commonFlags(req), res.From, res.To))
	}
	return cmds
}

// commonFlags are the flags that name the same target in a follow-up command.
func commonFlags(req Request) string {
	t := req.Target
	parts := []string{"--table " + t.Table, "--regions " + strings.Join(t.Regions, ",")}
	if t.Pointer != DefaultPointer(t.Table) {
		parts = append(parts, "--pointer "+t.Pointer)
	}
	for _, reg := range slices.Sorted(maps.Keys(t.HealthChecks)) {
		parts = append(parts, "--health-check "+reg+"="+t.HealthChecks[reg])
	}
	if req.Rules.AllowUnreplicated {
		parts = append(parts, "--allow-unreplicated")
	}
	if req.BreakGlassRoleARN != "" {
		parts = append(parts, "--break-glass-role-arn "+req.BreakGlassRoleARN)
	}
	return strings.Join(parts, " ")
}
