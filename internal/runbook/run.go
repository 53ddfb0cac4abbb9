package runbook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dynops/dynops/internal/notify"
)

// Exec runs one dynops command line in-process and returns its exit code;
// stdout is the command's output (JSON: the runner adds -o json).
type Exec func(ctx context.Context, args []string, step string, stdout io.Writer) int

// Runner runs a runbook.
type Runner struct {
	Exec     Exec
	Store    Store
	Incident string
	Params   map[string]string // --param k=v
	Yes      bool              // --yes: destructive steps run for real
	Confirm  []string          // --confirm NAME...: each destructive step gets the ones naming its targets (Step.Confirm)
	Until    string            // --until STEP: stop before this step (look first, then run again to go on)
	Through  string            // --through STEP: stop after this step
	// RestartFrom STEP runs that step and every later one again, even if
	// they finished (--restart-from).
	RestartFrom string
	// Decide are the choices of decision steps given on the command line
	// (--decide STEP=CHOICE); Decided is told each decision and how it was
	// made (the audit records it).
	Decide  map[string]string
	Decided func(step, choice, how string)
	// Changed is told each parameter changed on resume, Restarted the
	// finished steps --restart-from runs again (the audit records both).
	Changed   func(ParamChange)
	Restarted func(step string, again []string)
	// Ask prompts a person (nil: no terminal). It returns the answer line.
	Ask    func(question string) (string, error)
	Out    io.Writer
	ErrOut io.Writer
	// Summarize shows each step's result as one short line on ErrOut
	// instead of its full JSON on Out (a person reading; the full output is
	// kept in the state file, and -o json shows it).
	Summarize bool
	Now       func() time.Time
	// Approvals is how many other callers must approve a destructive step
	// on protected targets (a step with confirm: names) before it runs for
	// real; 0: none. It needs a shared store (the approvers write there).
	Approvals int
	// ApprovalTimeout is how long a request waits (DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// Caller is the run's STS caller ARN (the requester of approvals).
	Caller string
	// Approval is told each approval event of a step (requested, used,
	// rejected, timed-out); the audit records it.
	Approval func(event string, a *Approval)
	// StepApprovals override Approvals for the steps they name (the
	// config's step_approvals of this runbook).
	StepApprovals map[string]int
	// Env is the run's env: its config section and its cap.
	Env string
	// Cap is at most how many destructive steps on protected targets may
	// run in Env per hour, counted by Counter (the team's shared state); 0:
	// no cap. CapFrom says where it is set (the refusal names it).
	Cap     int
	CapFrom string
	Counter CapCounter
	// BreakGlass is the reason of a break-glass run (--break-glass; the
	// caller is the break-glass role, checked before the run): the approval
	// gate and the cap are skipped, each skip told to BrokeGlass (the audit
	// records it) and notified.
	BreakGlass string
	BrokeGlass func(step, gate string)
	// Notifier is told the run's events (nil: nobody).
	Notifier *notify.Notifier
	// Begin is called once the parameters are known, before the first
	// step (the runbook run's own `started` audit record); an error stops
	// the run before anything ran.
	Begin func() error
	// Outcome, when set, gives the exit code and reason of a run's end,
	// recorded in its state (State.Ended) before the hold is released: a
	// terminal following a run in AWS learns there how it ended.
	Outcome func(sum *Summary, err error) (code int, why string)
}

// StepError is a step that stopped the runbook.
type StepError struct {
	Step string
	Code int
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %s: %v", e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// ErrStopped is returned when the runbook stopped before a destructive step
// because nobody confirmed it (a dry run of that step was shown).
var ErrStopped = errors.New("stopped before a destructive step")

// ErrAwaitingApproval is returned when the run stopped at a destructive
// step on protected targets whose plan no other caller approved yet.
var ErrAwaitingApproval = errors.New("waiting for a second approver")

// DefaultApprovalTimeout is how long an approval request waits.
const DefaultApprovalTimeout = time.Hour

// MissingParamsError lists the params nobody gave.
type MissingParamsError struct{ Params []Param }

func (e *MissingParamsError) Error() string {
	var parts []string
	for _, p := range e.Params {
		parts = append(parts, fmt.Sprintf("--param %s=VALUE (%s)", p.Name, p.Description))
	}
	return "missing runbook parameters: " + strings.Join(parts, ", ")
}

// Summary is what a run did.
type Summary struct {
	Incident string            `json:"incident"`
	Runbook  string            `json:"runbook"`
	Ran      []string          `json:"ran"`
	Skipped  []string          `json:"skipped_done_earlier"`
	Outputs  map[string]string `json:"outputs"`
	Complete bool              `json:"complete"`
}

// Run runs rb from its first unfinished step.
func (r *Runner) Run(ctx context.Context, rb *Runbook) (sum *Summary, err error) {
	if err := r.checkStops(rb); err != nil {
		return nil, err
	}
	if err := r.Store.Hold(ctx, r.Incident, rb.Name); err != nil {
		return nil, err
	}
	defer func() { _ = r.Store.Release(context.WithoutCancel(ctx), r.Incident, rb.Name) }()
	st, err := r.Store.Load(ctx, r.Incident, rb.Name)
	if err != nil {
		return nil, err
	}
	saved := false // a state refused before its first save stays unwritten
	defer func() {
		if saved {
			r.recordEnd(context.WithoutCancel(ctx), st, sum, err)
		}
	}()
	if st == nil {
		st = &State{Incident: r.Incident, Runbook: rb.Name, Started: r.Now().UTC().Format("20060102t150405z"),
			Params: map[string]string{}, Outputs: map[string]string{}}
	} else {
		fmt.Fprintf(r.ErrOut, "Resuming %s for incident %s: %s.\n", rb.Name, r.Incident, doneSoFar(st.Done, len(rb.Steps)))
	}
	if r.RestartFrom != "" {
		if !rb.HasStep(r.RestartFrom) {
			return nil, &ParamError{fmt.Errorf("--restart-from %s: runbook %s has no such step (steps: %s)", r.RestartFrom, rb.Name, strings.Join(rb.StepIDs(), ", "))}
		}
		again := undoFrom(rb, st, stepIndex(rb, r.RestartFrom))
		fmt.Fprintf(r.ErrOut, "Restarting at step %s: %d finished step(s) run again (%s).\n", r.RestartFrom, len(again), strings.Join(again, ", "))
		if r.Restarted != nil {
			r.Restarted(r.RestartFrom, again)
		}
	}
	if err := r.resolveParams(rb, st); err != nil {
		return nil, err
	}
	targets, err := stepTargets(rb, st.Params)
	if err != nil {
		return nil, err
	}
	if err := checkConfirms(rb, r.Confirm, targets); err != nil {
		return nil, err
	}
	if err := checkDecide(rb, r.Decide); err != nil {
		return nil, err
	}
	if r.Begin != nil {
		if err := r.Begin(); err != nil {
			return nil, err
		}
	}
	workDir, err := r.Store.WorkDir(r.Incident, rb.Name)
	if err != nil {
		return nil, err
	}
	st.Ended = nil
	if err := r.Store.Save(ctx, st); err != nil {
		return nil, err
	}
	saved = true
	sum = &Summary{Incident: r.Incident, Runbook: rb.Name, Outputs: st.Outputs}
	if flag, step := r.stopDoneEarlier(st); flag != "" {
		fmt.Fprintf(r.ErrOut, "\nStopped: step %s was done earlier, so %s %s stops before anything runs. Run the same command without %s to go on.\n", step, flag, step, flag)
		return sum, nil
	}
	for i, step := range rb.Steps {
		if step.ID == r.Until && !st.IsDone(step.ID) {
			fmt.Fprintf(r.ErrOut, "\nStopped before step %d/%d %s (--until %s). Run the same command without --until to go on.\n", i+1, len(rb.Steps), step.ID, step.ID)
			return sum, nil
		}
		if st.IsDone(step.ID) {
			fmt.Fprintf(r.ErrOut, "\n== step %d/%d %s: done earlier, skipped\n", i+1, len(rb.Steps), step.ID)
			sum.Skipped = append(sum.Skipped, step.ID)
			continue
		}
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if err := r.Store.Hold(ctx, r.Incident, rb.Name); err != nil { // renewed before every step
			return sum, err
		}
		if step.IsDecision() {
			choice, how, err := r.decide(step)
			if err != nil {
				return sum, err
			}
			if st.Decisions == nil {
				st.Decisions = map[string]string{}
			}
			st.Decisions[step.ID] = choice
			st.Done = append(st.Done, step.ID)
			if err := r.Store.Save(ctx, st); err != nil {
				return sum, err
			}
			fmt.Fprintf(r.ErrOut, "\n== step %d/%d %s: decided %s (%s)\n", i+1, len(rb.Steps), step.ID, choice, how)
			if r.Decided != nil {
				r.Decided(step.ID, choice, how)
			}
			r.notify(ctx, rb, notify.Decided, step.ID, fmt.Sprintf("decided %s (%s)", choice, how))
			sum.Ran = append(sum.Ran, step.ID)
			if r.stopAfter(i, rb) {
				return sum, nil
			}
			continue
		}
		if d, c, ok := strings.Cut(step.When, "="); ok && st.Decisions[d] != c {
			st.Done = append(st.Done, step.ID)
			if err := r.Store.Save(ctx, st); err != nil {
				return sum, err
			}
			fmt.Fprintf(r.ErrOut, "\n== step %d/%d %s: not on this path (%s=%s), skipped\n", i+1, len(rb.Steps), step.ID, d, st.Decisions[d])
			sum.Skipped = append(sum.Skipped, step.ID)
			if r.stopAfter(i, rb) {
				return sum, nil
			}
			continue
		}
		vars := map[string]string{"incident": r.Incident, "state_dir": workDir, "started": st.Started}
		for k, v := range st.Params {
			vars[k] = v
		}
		for k, v := range st.Outputs {
			vars[k] = v
		}
		line, err := Expand(step.Run, vars)
		if err != nil {
			return sum, &StepError{Step: step.ID, Code: 2, Err: err}
		}
		args, err := Split(line)
		if err != nil {
			return sum, &StepError{Step: step.ID, Code: 2, Err: err}
		}
		title := step.Title
		if title != "" {
			title = " (" + title + ")"
		}
		fmt.Fprintf(r.ErrOut, "\n== step %d/%d %s%s\n", i+1, len(rb.Steps), step.ID, title)
		if step.Destructive {
			go_, err := r.confirm(ctx, step, args, targets[step.ID])
			if err != nil {
				return sum, err
			}
			if !go_ {
				return sum, ErrStopped
			}
			args = append(args, "--yes")
		}
		for _, c := range confirmsFor(r.Confirm, targets[step.ID]) {
			args = append(args, "--confirm", c)
		}
		if step.Destructive && len(targets[step.ID]) > 0 {
			if err := r.gates(ctx, rb, st, step, args); err != nil {
				return sum, err
			}
		}
		st.Current = step.ID
		if err := r.Store.Save(ctx, st); err != nil {
			return sum, err
		}
		checks := make([]Check, len(step.Checks))
		for j, c := range step.Checks {
			if c.Value, err = Expand(c.Value, vars); err != nil {
				return sum, &StepError{Step: step.ID, Code: 2, Err: err}
			}
			checks[j] = c
		}
		step.Checks = checks
		r.notify(ctx, rb, notify.StepStarted, step.ID, fmt.Sprintf("step %d/%d started%s", i+1, len(rb.Steps), title))
		doc, err := r.runStep(ctx, step, args)
		if err != nil {
			r.notify(ctx, rb, notify.StepFailed, step.ID, "failed: "+err.Error())
		}
		var se *StepError
		if errors.As(err, &se) && se.Code == 2 {
			st.Refused = step.ID // bad input: nothing changed, its params may still change
			_ = r.Store.Save(ctx, st)
		}
		if err != nil {
			return sum, err
		}
		st.Refused = ""
		if raw, err := json.Marshal(doc); err == nil && doc != nil {
			if st.Results == nil {
				st.Results = map[string]json.RawMessage{}
			}
			st.Results[step.ID] = raw
		}
		for _, o := range step.Outputs {
			v, ok := Lookup(doc, o.Path)
			if !ok {
				err := &StepError{Step: step.ID, Code: 1, Err: fmt.Errorf("output %s: %s is not in the step's JSON output", o.Name, o.Path)}
				r.notify(ctx, rb, notify.StepFailed, step.ID, "failed: "+err.Error())
				return sum, err
			}
			st.Outputs[o.Name] = String(v)
			fmt.Fprintf(r.ErrOut, "   output %s = %s\n", o.Name, st.Outputs[o.Name])
		}
		st.Done = append(st.Done, step.ID)
		st.Current = ""
		st.Updated = r.Now().UTC()
		if err := r.Store.Save(ctx, st); err != nil {
			return sum, err
		}
		r.notify(ctx, rb, notify.StepFinished, step.ID, fmt.Sprintf("step %d/%d finished", i+1, len(rb.Steps)))
		sum.Ran = append(sum.Ran, step.ID)
		if r.stopAfter(i, rb) {
			return sum, nil
		}
	}
	sum.Complete = true
	return sum, nil
}

// checkStops refuses an --until or --through that names no step of rb, and
// both at once.
func (r *Runner) checkStops(rb *Runbook) error {
	if r.Until != "" && r.Through != "" {
		return &ParamError{fmt.Errorf("--until %s and --through %s: give one (--until STEP stops before STEP, --through STEP after it)", r.Until, r.Through)}
	}
	for _, s := range [][2]string{{"--until", r.Until}, {"--through", r.Through}} {
		if s[1] != "" && !rb.HasStep(s[1]) {
			return &ParamError{fmt.Errorf("%s %s: runbook %s has no such step (steps: %s)", s[0], s[1], rb.Name, strings.Join(rb.StepIDs(), ", "))}
		}
	}
	return nil
}

// stopAfter reports (and says) whether --through names step i, a command,
// a decision or a step not on the path taken, and a step follows it.
func (r *Runner) stopAfter(i int, rb *Runbook) bool {
	id := rb.Steps[i].ID
	if id != r.Through || i == len(rb.Steps)-1 {
		return false
	}
	fmt.Fprintf(r.ErrOut, "\nStopped after step %d/%d %s (--through %s). Run the same command without --through to go on.\n", i+1, len(rb.Steps), id, id)
	return true
}

// stopDoneEarlier returns the flag and step of an --until or --through
// whose step an earlier run finished: the stop it asks for is behind
// the run, so nothing runs (fail closed; without the flag the run goes on).
func (r *Runner) stopDoneEarlier(st *State) (flag, step string) {
	switch {
	case r.Until != "" && st.IsDone(r.Until):
		return "--until", r.Until
	case r.Through != "" && st.IsDone(r.Through):
		return "--through", r.Through
	}
	return "", ""
}

// doneSoFar says how far an earlier run got.
func doneSoFar(done []string, steps int) string {
	if len(done) == 0 {
		return fmt.Sprintf("no step done yet (%d to run)", steps)
	}
	return fmt.Sprintf("%d of %d step(s) done (%s)", len(done), steps, strings.Join(done, ", "))
}

// runStep runs one step with -o json, shows its output, and checks it.
func (r *Runner) runStep(ctx context.Context, step Step, args []string) (any, error) {
	fmt.Fprintf(r.ErrOut, "$ dynops %s\n", strings.Join(quoteArgs(args), " "))
	var out bytes.Buffer
	stdout := io.MultiWriter(&out, r.Out)
	if r.Summarize {
		stdout = &out
	}
	code := r.Exec(ctx, append(args, "-o", "json"), step.ID, stdout)
	if r.Summarize {
		if s := Summarize(out.Bytes(), 10); s != "" {
			fmt.Fprintf(r.ErrOut, "   result: %s\n", s)
		}
	}
	allowed := step.AllowExit
	if len(allowed) == 0 {
		allowed = []int{0}
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == code
	}
	if !ok {
		return nil, &StepError{Step: step.ID, Code: code, Err: fmt.Errorf("exit status %d (allowed: %v); fix the cause, then run the same `dynops runbook run` again: it resumes at this step", code, allowed)}
	}
	var doc any
	if trimmed := bytes.TrimSpace(out.Bytes()); len(trimmed) > 0 {
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return nil, &StepError{Step: step.ID, Code: 1, Err: fmt.Errorf("its output is not JSON: %v", err)}
		}
	}
	for _, c := range step.Checks {
		if err := c.Eval(doc); err != nil {
			return nil, &StepError{Step: step.ID, Code: 1, Err: err}
		}
		fmt.Fprintf(r.ErrOut, "   check %s: ok\n", c.Text)
	}
	return doc, nil
}

// confirm decides whether a destructive step runs for real: with --yes it
// does; on a terminal the step's dry run is shown and a person says yes;
// otherwise its dry run is shown and the runbook stops there.
func (r *Runner) confirm(ctx context.Context, step Step, args, targets []string) (bool, error) {
	if r.Yes {
		return true, nil
	}
	fmt.Fprintf(r.ErrOut, "   destructive step: its dry run first\n")
	if _, err := r.runStep(ctx, Step{ID: step.ID, AllowExit: step.AllowExit}, args); err != nil {
		return false, err
	}
	if r.Ask == nil {
		how := "--yes"
		if len(targets) > 0 {
			how += " (and, for protected targets, --confirm " + strings.Join(targets, ",") + ")"
		}
		fmt.Fprintf(r.ErrOut, "\nStopped before step %s, which changes things. Nothing more was changed.\nRe-run with %s to run it; finished steps are not run again.\n", step.ID, how)
		return false, nil
	}
	answer, err := r.Ask(fmt.Sprintf("Run step %s for real? [y/N] ", step.ID))
	if err != nil {
		return false, err
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		fmt.Fprintf(r.ErrOut, "Stopped before step %s: nothing more was changed.\n", step.ID)
		return false, nil
	}
	return true, nil
}

func (r *Runner) resolveParams(rb *Runbook, st *State) error {
	declared := map[string]Param{}
	for _, p := range rb.Params {
		declared[p.Name] = p
	}
	var names []string
	for k := range r.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := r.Params[k]
		if _, ok := declared[k]; !ok {
			return unknownParam(rb, k)
		}
		if old, ok := st.Params[k]; ok && old != v {
			if err := r.changeParam(rb, st, k, old, v); err != nil {
				return err
			}
		}
		st.Params[k] = v
	}
	var missing []Param
	for _, p := range rb.Params {
		if _, ok := st.Params[p.Name]; ok {
			continue
		}
		if r.Ask != nil {
			q := fmt.Sprintf("%s (%s)", p.Name, p.Description)
			if p.HasDefault {
				q += fmt.Sprintf(" [%s]", p.Default)
			}
			answer, err := r.Ask(q + ": ")
			if err != nil {
				return err
			}
			if answer = strings.TrimSpace(answer); answer != "" || p.HasDefault {
				if answer == "" {
					answer = p.Default
				}
				st.Params[p.Name] = answer
				continue
			}
		} else if p.HasDefault {
			st.Params[p.Name] = p.Default
			continue
		}
		missing = append(missing, p)
	}
	if len(missing) > 0 {
		return &ParamError{&MissingParamsError{Params: missing}}
	}
	return nil
}

// stepTargets expands each step's `confirm:` names with the
// run's parameters: the targets each step may need confirmed.
func stepTargets(rb *Runbook, params map[string]string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, st := range rb.Steps {
		for _, c := range st.Confirm {
			v, err := Expand(c, params)
			if err != nil {
				return nil, &ParamError{fmt.Errorf("step %s: confirm %s: %w", st.ID, c, err)}
			}
			for _, t := range strings.Split(v, ",") {
				if t = strings.TrimSpace(t); t != "" && !contains(out[st.ID], t) {
					out[st.ID] = append(out[st.ID], t)
				}
			}
		}
	}
	return out, nil
}

// checkConfirms refuses, before any step runs, a --confirm value that names
// no target of any step of the runbook (a typo would otherwise surface only
// at the step, after earlier steps changed things).
func checkConfirms(rb *Runbook, confirms []string, targets map[string][]string) error {
	var all []string
	seen := map[string]bool{}
	for _, st := range rb.Steps {
		for _, t := range targets[st.ID] {
			if !seen[t] {
				all = append(all, t)
			}
			seen[t] = true
		}
	}
	for _, c := range confirms {
		if seen[c] {
			continue
		}
		if len(all) == 0 {
			return &ParamError{fmt.Errorf("--confirm %q: runbook %s has no step with a target to confirm with these parameters; nothing was run", c, rb.Name)}
		}
		return &ParamError{fmt.Errorf("--confirm %q names no target of runbook %s; its steps change %s: nothing was run", c, rb.Name, strings.Join(quoted(all), ", "))}
	}
	return nil
}

// confirmsFor are the --confirm values that name one of a step's targets.
func confirmsFor(confirms, targets []string) []string {
	var out []string
	for _, c := range confirms {
		if contains(targets, c) && !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

// changeParam lets a resumed run give parameter k a new value when no step
// that uses it (or comes after one) changed anything yet: the finished
// steps from the first that uses it run again. A step that changes things
// and finished, or was interrupted, refuses the change, naming the step.
func (r *Runner) changeParam(rb *Runbook, st *State, k, old, v string) error {
	first := -1
	for i, s := range rb.Steps {
		if s.uses(k) && (st.IsDone(s.ID) || st.Current == s.ID) {
			first = i
			break
		}
	}
	if first >= 0 {
		for _, s := range rb.Steps[first:] {
			ran := st.IsDone(s.ID) || st.Current == s.ID
			refused := !st.IsDone(s.ID) && st.Refused == s.ID
			if ran && s.writes() && !refused {
				return &ParamError{fmt.Errorf("--param %s=%s: step %s of incident %s already ran with %s=%s and may have changed things; "+
					"keep %s=%s, or run the steps again with --restart-from STEP, or start over with a new --incident", k, v, s.ID, r.Incident, k, old, k, old)}
			}
		}
		undoFrom(rb, st, first)
	}
	c := ParamChange{Name: k, Old: old, New: v, At: r.Now().UTC()}
	st.Changes = append(st.Changes, c)
	fmt.Fprintf(r.ErrOut, "Parameter %s changed: %s -> %s (no step that uses it changed anything yet).\n", k, old, v)
	if r.Changed != nil {
		r.Changed(c)
	}
	return nil
}

// undoFrom marks the steps from index i on as not done, returning the
// finished ones among them.
func undoFrom(rb *Runbook, st *State, i int) []string {
	again := []string{}
	later := map[string]bool{}
	for _, s := range rb.Steps[i:] {
		later[s.ID] = true
	}
	var keep []string
	for _, d := range st.Done {
		if later[d] {
			again = append(again, d)
			continue
		}
		keep = append(keep, d)
	}
	st.Done = keep
	return again
}

func stepIndex(rb *Runbook, id string) int {
	for i, s := range rb.Steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// uses reports whether the step reads parameter k.
func (s Step) uses(k string) bool {
	text := s.Run + " " + strings.Join(s.Confirm, " ")
	for _, c := range s.Checks {
		text += " " + c.Value
	}
	return contains(Placeholders(text), k)
}

// writes reports whether the step may change things: destructive, or
// naming protected targets it writes (confirm:).
func (s Step) writes() bool { return s.Destructive || len(s.Confirm) > 0 }

// ParamError is bad input in the parameters (exit 2).
type ParamError struct{ Err error }

func (e *ParamError) Error() string { return e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// LineAsker asks on w and reads the answer from in.
func LineAsker(in io.Reader, w io.Writer) func(string) (string, error) {
	br := bufio.NewReader(in)
	return func(q string) (string, error) {
		fmt.Fprint(w, q)
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("no answer (input closed)")
		}
		return line, nil
	}
}

// HasStep reports whether rb has a step with this id.
func (rb *Runbook) HasStep(id string) bool {
	for _, s := range rb.Steps {
		if s.ID == id {
			return true
		}
	}
	return false
}

// StepIDs lists the step ids in order.
func (rb *Runbook) StepIDs() []string {
	ids := make([]string, len(rb.Steps))
	for i, s := range rb.Steps {
		ids[i] = s.ID
	}
	return ids
}

// checkDecide refuses a --decide that names no decision of the runbook or
// none of its choices, before any step.
func checkDecide(rb *Runbook, decide map[string]string) error {
	choices := map[string][]string{}
	var names []string
	for _, st := range rb.Steps {
		if st.IsDecision() {
			choices[st.ID] = st.Choices
			names = append(names, st.ID+"="+strings.Join(st.Choices, "|"))
		}
	}
	for k, v := range decide {
		cs, ok := choices[k]
		if !ok || !slices.Contains(cs, v) {
			if len(names) == 0 {
				return &ParamError{fmt.Errorf("--decide %s=%s: runbook %s has no decision", k, v, rb.Name)}
			}
			return &ParamError{fmt.Errorf("--decide %s=%s: runbook %s decides %s", k, v, rb.Name, strings.Join(names, ", "))}
		}
	}
	return nil
}

// decide makes a decision step's choice: --decide, else a person on a
// terminal (even with --yes: a decision is not a confirmation), else the
// step's default; with none of them the run stops (ErrStopped).
func (r *Runner) decide(step Step) (choice, how string, err error) {
	if v := r.Decide[step.ID]; v != "" {
		return v, "--decide", nil
	}
	options := strings.Join(step.Choices, "/")
	if r.Ask != nil {
		for range 3 {
			q := fmt.Sprintf("Decision %s: choose %s", step.ID, options)
			if step.Default != "" {
				q += " [" + step.Default + "]"
			}
			answer, err := r.Ask(q + ": ")
			if err != nil {
				return "", "", err
			}
			a := strings.ToLower(strings.TrimSpace(answer))
			if a == "" && step.Default != "" {
				return step.Default, "the default, on a terminal", nil
			}
			if slices.Contains(step.Choices, a) {
				return a, "typed", nil
			}
			fmt.Fprintf(r.ErrOut, "%q is not one of %s.\n", answer, options)
		}
		return "", "", ErrStopped
	}
	if step.Default != "" {
		return step.Default, fmt.Sprintf("the default: no terminal and no --decide %s=%s", step.ID, options), nil
	}
	fmt.Fprintf(r.ErrOut, "\nStopped at decision %s: nothing more was changed. Choose with --decide %s=%s and run the same command again.\n", step.ID, step.ID, strings.Replace(options, "/", "|", -1))
	return "", "", ErrStopped
}

// approved lets a destructive step on protected targets run only with the
// approval of r.Approvals other callers of exactly this plan (its command
// line and dry-run output, by SHA-256). Without one it records a request
// in the shared state, prints the plan and its hash, and stops
// (ErrAwaitingApproval); a rejected or timed-out request stops the run too.
func (r *Runner) approved(ctx context.Context, rb *Runbook, st *State, step Step, args []string, need int) error {
	var dry []string
	for _, a := range args {
		if a != "--yes" {
			dry = append(dry, a)
		}
	}
	var out bytes.Buffer
	code := r.Exec(ctx, append(dry, "-o", "json"), step.ID, &out)
	if allowed := append([]int{0}, step.AllowExit...); !slices.Contains(allowed, code) {
		return &StepError{Step: step.ID, Code: code, Err: fmt.Errorf("its dry run (the plan to approve) exited %d; fix the cause, then run the same `dynops runbook run` again", code)}
	}
	plan := "dynops " + strings.Join(quoteArgs(args), " ") + "\n" + strings.TrimSpace(out.String()) + "\n"
	sha := PlanSHA256(plan)
	now := r.Now().UTC()
	if st.Approvals == nil {
		st.Approvals = map[string]*Approval{}
	}
	event := func(e string, a *Approval) {
		if r.Approval != nil {
			r.Approval(e, a)
		}
		kind, text := approvalNotice(e, a)
		r.notify(ctx, rb, kind, step.ID, text)
	}
	if a := st.Approvals[step.ID]; a != nil {
		switch {
		case a.PlanSHA256 != sha:
			fmt.Fprintf(r.ErrOut, "   the plan changed since approval was asked (sha256 %s, now %s): a new approval is needed\n", a.PlanSHA256, sha)
		case a.Approved():
			delete(st.Approvals, step.ID) // used once: a run of the step again asks again
			if err := r.Store.Save(ctx, st); err != nil {
				return err
			}
			fmt.Fprintf(r.ErrOut, "   plan sha256 %s approved by %s\n", sha, approvers(a))
			event("approval-used", a)
			return nil
		case a.Rejected != nil:
			delete(st.Approvals, step.ID)
			if err := r.Store.Save(ctx, st); err != nil {
				return err
			}
			event("rejected", a)
			fmt.Fprintf(r.ErrOut, "\nStopped before step %s: %s rejected its plan (%s). Nothing more was changed. Run the same command again to ask for a new approval.\n", step.ID, a.Rejected.Caller, orDash(a.Rejected.Reason))
			return ErrAwaitingApproval
		case !now.Before(a.Expires):
			a.TimedOut = true
			delete(st.Approvals, step.ID)
			if err := r.Store.Save(ctx, st); err != nil {
				return err
			}
			event("timed-out", a)
			fmt.Fprintf(r.ErrOut, "\nStopped before step %s: its approval request timed out at %s with %d of %d approval(s). Nothing more was changed. Run the same command again to ask again.\n", step.ID, a.Expires.Format(time.RFC3339), len(a.Approvers), a.Needed)
			return ErrAwaitingApproval
		default:
			fmt.Fprintf(r.ErrOut, "\nStopped before step %s: still waiting for approval (%d of %d, until %s).\n", step.ID, len(a.Approvers), a.Needed, a.Expires.Format(time.RFC3339))
			printApprove(r.ErrOut, st, a)
			return ErrAwaitingApproval
		}
	}
	timeout := r.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	a := &Approval{Step: step.ID, Plan: plan, PlanSHA256: sha, Requester: r.Caller, Requested: now, Expires: now.Add(timeout), Needed: need}
	st.Approvals[step.ID] = a
	if err := r.Store.Save(ctx, st); err != nil {
		return err
	}
	event("approval-requested", a)
	fmt.Fprintf(r.ErrOut, "\nStopped before step %s: it changes protected targets and needs %d approval(s) by another caller before %s.\nThe plan (sha256 %s):\n%s", step.ID, a.Needed, a.Expires.Format(time.RFC3339), sha, plan)
	printApprove(r.ErrOut, st, a)
	return ErrAwaitingApproval
}

func printApprove(w io.Writer, st *State, a *Approval) {
	fmt.Fprintf(w, "Another caller approves with:\n  dynops runbook approve --incident %s --runbook %s --step %s --plan-sha256 %s\nthen run the same `dynops runbook run` again.\n", st.Incident, st.Runbook, a.Step, a.PlanSHA256)
}

func approvers(a *Approval) string {
	var out []string
	for _, d := range a.Approvers {
		out = append(out, d.Caller)
	}
	return strings.Join(out, ", ")
}

// recordEnd saves how the run ended in its state (Outcome): not over a
// state another process changed (its save is refused anyway).
func (r *Runner) recordEnd(ctx context.Context, st *State, sum *Summary, err error) {
	var ce *ConflictError
	if r.Outcome == nil || errors.As(err, &ce) {
		return
	}
	code, why := r.Outcome(sum, err)
	host, _ := os.Hostname()
	st.Ended = &Ended{Code: code, Why: why, By: r.Caller, Host: host, At: r.Now().UTC()}
	st.Updated = st.Ended.At
	if serr := r.Store.Save(ctx, st); serr != nil {
		fmt.Fprintf(r.ErrOut, "warning: how the run ended (exit %d) is not in its state: %v\n", code, serr)
	}
}
