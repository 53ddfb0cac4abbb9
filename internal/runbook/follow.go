package runbook

import (
	"fmt"
	"io"
	"strings"
)

// Follower prints the step lines of a run that another process runs (a
// task in AWS), from the states it saves: the lines that process prints,
// as its steps finish.
type Follower struct {
	Runbook *Runbook
	ErrOut  io.Writer
	// Earlier are the steps done before the follow began (shown as
	// "done earlier, skipped", as a resumed run shows them).
	Earlier []string
	shown   int    // rb.Steps[:shown] are shown
	running string // the step announced as running
}

// Show prints what st adds to what was shown: the finished steps (with
// their result line and outputs), then the step running now.
func (f *Follower) Show(st *State) {
	rb, w := f.Runbook, f.ErrOut
	n := len(rb.Steps)
	for ; f.shown < n && st.IsDone(rb.Steps[f.shown].ID); f.shown++ {
		i, step := f.shown, rb.Steps[f.shown]
		d, c, conditional := strings.Cut(step.When, "=")
		switch {
		case contains(f.Earlier, step.ID):
			fmt.Fprintf(w, "\n== step %d/%d %s: done earlier, skipped\n", i+1, n, step.ID)
		case step.IsDecision():
			fmt.Fprintf(w, "\n== step %d/%d %s: decided %s\n", i+1, n, step.ID, st.Decisions[step.ID])
		case conditional && st.Decisions[d] != c:
			fmt.Fprintf(w, "\n== step %d/%d %s: not on this path (%s=%s), skipped\n", i+1, n, step.ID, d, st.Decisions[d])
		default:
			if f.running != step.ID {
				fmt.Fprintf(w, "\n== step %d/%d %s%s\n", i+1, n, step.ID, titled(step))
			}
			if s := Summarize(st.Results[step.ID], 10); s != "" {
				fmt.Fprintf(w, "   result: %s\n", s)
			}
			for _, o := range step.Outputs {
				fmt.Fprintf(w, "   output %s = %s\n", o.Name, st.Outputs[o.Name])
			}
		}
	}
	if cur := st.Current; cur != "" && cur != f.running && !st.IsDone(cur) && f.shown < n && rb.Steps[f.shown].ID == cur {
		fmt.Fprintf(w, "\n== step %d/%d %s%s\n", f.shown+1, n, cur, titled(rb.Steps[f.shown]))
		f.running = cur
	}
}

// ShowEnd prints how the run ended (st.Ended) and, when it waits for a
// second approver, the plan and the approve command.
func (f *Follower) ShowEnd(st *State) {
	if st.Ended == nil {
		return
	}
	fmt.Fprintf(f.ErrOut, "\nThe run ended (exit %d, on %s): %s\n", st.Ended.Code, orDash(st.Ended.Host), st.Ended.Why)
	for _, a := range st.Approvals {
		if a.Waiting(st.Ended.At) {
			fmt.Fprintf(f.ErrOut, "Step %s waits for %d approval(s) of its plan (sha256 %s):\n%s", a.Step, a.Needed, a.PlanSHA256, a.Plan)
			printApprove(f.ErrOut, st, a)
		}
	}
}

func titled(s Step) string {
	if s.Title == "" {
		return ""
	}
	return " (" + s.Title + ")"
}

// Preflight refuses, before anything runs, what a run would refuse without
// reading its state: --until/--through and --decide naming no step or
// choice, and a --param the runbook does not take (a run started in AWS is
// refused here, not in its task).
func (r *Runner) Preflight(rb *Runbook) error {
	if err := r.checkStops(rb); err != nil {
		return err
	}
	if err := checkDecide(rb, r.Decide); err != nil {
		return err
	}
	for k := range r.Params {
		if err := unknownParam(rb, k); err != nil {
			return err
		}
	}
	return nil
}

// unknownParam refuses a --param k the runbook does not take (nil if it does).
func unknownParam(rb *Runbook, k string) error {
	var names []string
	for _, p := range rb.Params {
		if p.Name == k {
			return nil
		}
		names = append(names, p.Name)
	}
	return &ParamError{fmt.Errorf("--param %s: runbook %s has no such parameter (it takes: %s)", k, rb.Name, strings.Join(names, ", "))}
}
