package runbook

import (
	"context"
	"errors"
	"strings"
	"testing"
)

const decisionSample = "# Decide\n\n```dynops-params\ntable: t\n```\n\n" +
	"```dynops\nstep: diff\nrun: dynops table diff --source a --target {{table}}\n```\n\n" +
	"```dynops\nstep: path\nchoose: repair, cutover\ndefault: repair\n```\n\n" +
	"```dynops\nstep: repair\nrun: dynops pitr repair --from a --to {{table}}\ndestructive: true\nwhen: path=repair\n```\n\n" +
	"```dynops\nstep: point\nrun: dynops dr status --table a\nwhen: path=cutover\n```\n"

// TestDecisions: a decision takes --decide, else a person on a terminal
// (asked even with --yes), else its default; the steps of the other path
// are skipped; the choice is kept in the state (a resume keeps it) and
// reported; a --decide that names no decision or no choice is bad input.
func TestDecisions(t *testing.T) {
	rb, err := Parse("decide", decisionSample)
	if err != nil {
		t.Fatal(err)
	}
	run := func(decide map[string]string, ask func(string) (string, error)) (*fakeExec, []string, error) {
		fe := &fakeExec{outs: map[string]string{"table diff": `{"changed":1}`, "pitr repair": `{}`, "dr status": `{}`}}
		r := newRunner(t, t.TempDir(), fe, map[string]string{"table": "dev-a-b"}, true)
		r.Decide, r.Ask = decide, ask
		var decided []string
		r.Decided = func(step, choice, how string) { decided = append(decided, step+"="+choice+" ("+how+")") }
		_, err := r.Run(context.Background(), rb)
		return fe, decided, err
	}
	ran := func(fe *fakeExec) string {
		var steps []string
		for _, c := range fe.calls {
			steps = append(steps, strings.SplitN(c, ":", 2)[0])
		}
		return strings.Join(steps, ",")
	}

	fe, decided, err := run(nil, nil)
	if err != nil || ran(fe) != "diff,repair" || len(decided) != 1 || !strings.Contains(decided[0], "path=repair (the default: no terminal") {
		t.Errorf("no terminal, no --decide: the default path: %v %q %v", err, ran(fe), decided)
	}
	fe, decided, err = run(map[string]string{"path": "cutover"}, nil)
	if err != nil || ran(fe) != "diff,point" || decided[0] != "path=cutover (--decide)" {
		t.Errorf("--decide path=cutover: %v %q %v", err, ran(fe), decided)
	}
	var asked []string
	fe, decided, err = run(nil, func(q string) (string, error) {
		asked = append(asked, q)
		if len(asked) == 1 {
			return "maybe", nil // not a choice: asked again
		}
		return "cutover", nil
	})
	if err != nil || ran(fe) != "diff,point" || len(asked) != 2 || !strings.Contains(asked[0], "choose repair/cutover [repair]") || decided[0] != "path=cutover (typed)" {
		t.Errorf("on a terminal with --yes, the person chooses: %v %q asked %q %v", err, ran(fe), asked, decided)
	}
	for _, bad := range []map[string]string{{"path": "rollback"}, {"diff": "repair"}} {
		fe, _, err = run(bad, nil)
		var pe *ParamError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "path=repair|cutover") || len(fe.calls) != 0 {
			t.Errorf("--decide %v: %v, %d calls; want bad input naming the decisions, before any step", bad, err, len(fe.calls))
		}
	}

	// A decision without a default and without a terminal stops the run.
	noDefault, err := Parse("decide", strings.Replace(decisionSample, "default: repair\n", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	fe2 := &fakeExec{outs: map[string]string{"table diff": `{}`}}
	_, err = newRunner(t, t.TempDir(), fe2, map[string]string{"table": "dev-a-b"}, true).Run(context.Background(), noDefault)
	if !errors.Is(err, ErrStopped) || len(fe2.calls) != 1 {
		t.Errorf("no default, no terminal: %v after %d calls; want stopped after the diff", err, len(fe2.calls))
	}

	for _, c := range []struct{ edit, want string }{
		{"when: path=repair", "when: path=rollback"},
		{"default: repair", "default: rollback"},
		{"choose: repair, cutover", "choose: repair"},
	} {
		_, err := Parse("decide", strings.Replace(decisionSample, c.edit, c.want, 1))
		if err == nil {
			t.Errorf("%q: parsed; want refused", c.want)
		}
	}
}
