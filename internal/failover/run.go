package failover

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

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/poll"
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

// defaultFrom is the region a switch moves writes away from when --from is
// not given: the one the pointer names, except when the pointer already
// names --to (in every region, or in some: a flip cut short) and exactly one
// other region is fenced. Then a switch of the same direction got to its
// pointer flip and stopped (killed, or a later
// step failed: the canary, the replication check, a failback's unfence of
// the old region): this run resumes it from that fenced region, every step
// being idempotent, instead of refusing a switch "to where writes already
// go" and leaving the rest undone. And a failback --to the region a
// failover fenced without flipping the pointer undoes that failover.
func defaultFrom(s State, r Rules) (from string, resume bool) {
	if r.To == "" || (s.Active != r.To && s.Active != "") {
		return s.Active, false
	}
	var fenced []string
	for _, f := range s.Fenced() {
		if f != r.To {
			fenced = append(fenced, f)
		}
	}
	if len(fenced) == 1 {
		return fenced[0], true
	}
	if len(fenced) > 1 && s.Active == r.To {
		// Three or more replicas, all but To fenced: which one took
		// writes before cannot be told (ambiguousFrom asks for --from).
		return "", false
	}
	// A failover that stopped between its fence and its pointer flip left
	// the pointer naming its own, fenced, region; the failback to it (the
	// undo HalfDone names) comes from the one other region.
	if to, ok := s.Region(r.To); ok && r.Mode == Failback && to.Fenced && len(fenced) == 0 && len(s.Regions) == 2 {
		for _, reg := range s.Regions {
			if reg.Region != r.To {
				return reg.Region, true
			}
		}
	}
	return s.Active, false
}

// defaultTo is the region a switch goes to when --to is not given: for a
// failback the one region a dynops dr fence holds (a migration's fence is
// not a failover's), for a failover the one other region.
func defaultTo(s State, r Rules) string {
	if c := toCandidates(s, r); len(c) == 1 {
		return c[0]
	}
	return ""
}

func toCandidates(s State, r Rules) []string {
	var candidates []string
	if r.Mode == Failback {
		return s.FencedBy(OwnerDR)
	}
	for _, reg := range s.Target.Regions {
		if reg != r.From {
			candidates = append(candidates, reg)
		}
	}
	return candidates
}

// ambiguousTo says why no --to could be chosen, naming the replicas.
func ambiguousTo(s State, r Rules) string {
	c := toCandidates(s, r)
	replicas := strings.Join(s.Target.Regions, ", ")
	switch {
	case r.Mode == Failback && len(c) == 0:
		return fmt.Sprintf("no replica carries a fence of dynops dr (replicas: %s; pointer: %s): pass --to with the region writes return to", replicas, describePointers(s))
	case r.Mode == Failback:
		return fmt.Sprintf("%d replicas carry a fence of dynops dr (%s; replicas: %s): pass --to with the region writes return to, one of %s", len(c), strings.Join(c, ", "), replicas, strings.Join(c, ", "))
	}
	return fmt.Sprintf("the table has %d replicas (%s): pass --to with the region writes move to, one of %s", len(s.Target.Regions), replicas, strings.Join(c, ", "))
}

// ambiguousFrom says why --from could not be chosen when the pointer
// already names --to: more than one other replica is fenced, so which
// one took writes before cannot be told.
func ambiguousFrom(s State, r Rules) string {
	var fenced []string
	for _, f := range s.Fenced() {
		if f != r.To {
			fenced = append(fenced, f)
		}
	}
	if len(fenced) == 0 {
		return fmt.Sprintf("writes are already meant to go to %s (the pointer names it in every region) and no other replica is fenced: nothing to switch", r.To)
	}
	return fmt.Sprintf("the pointer already names %s and %s are fenced: an earlier %s got past its pointer flip; pass --from with the region writes came from (one of %s) to finish it", r.To, strings.Join(fenced, ", "), r.Mode, strings.Join(fenced, ", "))
}

// othersOf are the replicas of a switch from -> to that are neither: with
// three or more regions, each could take writes, so each is fenced too.
func othersOf(t Target, from, to string) []string {
	var out []string
	for _, r := range t.Regions {
		if r != from && r != to {
			out = append(out, r)
		}
	}
	return out
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
