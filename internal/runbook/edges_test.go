package runbook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestLookupBounds: list indexes at and past both ends, negative indexes
// from the end, and a top-level list indexed twice.
func TestLookupBounds(t *testing.T) {
	var doc, grid any
	_ = json.Unmarshal([]byte(`{"list":[{"a":1},{"a":2}],"grid":[[1,2],[3,4]]}`), &doc)
	_ = json.Unmarshal([]byte(`[[1,2],[3,4]]`), &grid)
	cases := []struct {
		doc  any
		path string
		want string // "" = missing
	}{
		{doc, ".list[0].a", "1"},
		{doc, ".list[1].a", "2"},
		{doc, ".list[2].a", ""},
		{doc, ".list[-1].a", "2"},
		{doc, ".list[-2].a", "1"},
		{doc, ".list[-3].a", ""},
		{doc, ".grid[1][0]", "3"},
		{doc, ".grid[0][1]", "2"},
		{doc, ".grid[0][2]", ""},
		{grid, ".[1][0]", "3"},
		{grid, ".[0][-1]", "2"},
		{grid, ".[1].#", "2"},
		{grid, ".#", "2"},
		{doc, ".list[x]", ""},
		{doc, ".list.a", ""},
		{doc, ".list[0].a.b", ""},
		{doc, ".list[0]]", ""},
	}
	for _, c := range cases {
		v, ok := Lookup(c.doc, c.path)
		if c.want == "" {
			if ok {
				t.Errorf("Lookup(%s) = %v, want missing", c.path, v)
			}
			continue
		}
		if !ok || String(v) != c.want {
			t.Errorf("Lookup(%s) = %v, %v; want %s", c.path, v, ok, c.want)
		}
	}
}

// TestCheckComparisonsAtTheBoundary: each operator on the value itself,
// just below and just above it.
func TestCheckComparisonsAtTheBoundary(t *testing.T) {
	doc := map[string]any{"n": 3.0}
	for op, want := range map[string][3]bool{ // value 2, 3, 4
		"==": {false, true, false},
		"!=": {true, false, true},
		">":  {true, false, false},
		">=": {true, true, false},
		"<":  {false, false, true},
		"<=": {false, true, true},
	} {
		for i, v := range []string{"2", "3", "4"} {
			text := ".n " + op + " " + v
			c, err := parseCheck(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Eval(doc) == nil; got != want[i] {
				t.Errorf("check %q on n = 3: %v, want %v", text, got, want[i])
			}
		}
	}
}

// TestParseErrorsNameTheLine: an error names the block's line in the file
// and the line inside the block (blank and comment lines count).
func TestParseErrorsNameTheLine(t *testing.T) {
	head := "# T\n\nintro\n\n" // the block starts on line 5
	block := func(body string) string { return head + "```dynops\n" + body + "\n```\n" }
	cases := []struct{ md, want string }{
		{block("step: a\nrun: dynops check\nfoo: bar"), `runbook t line 5: step line 3: unknown key "foo"`},
		{block("step: a\n\n# a comment\nrun: dynops check\nfoo: bar"), `runbook t line 5: step line 5: unknown key "foo"`},
		{block("step: a\ndynops check"), `runbook t line 5: step line 2 "dynops check": write ` + "`key: value`"},
		{block("step: a\nrun: dynops check\ndestructive: maybe"), `runbook t line 5: step line 3: destructive: "maybe" is not true or false`},
		{block("step: a\nrun: dynops check\noutput: x"), `runbook t line 5: step line 3: output "x": write`},
		{block("step: a\nrun: dynops check\ncheck: .a ~ 1"), `runbook t line 5: step line 3: check ".a ~ 1"`},
		{block("step: a\nrun: dynops check\nallow-exit: 0,x"), `runbook t line 5: step line 3: allow-exit "0,x"`},
		{head + "```dynops-params\na: x\nBad: y\n```\n" + block("step: a\nrun: dynops check"), `runbook t line 5: params line 2 "Bad: y"`},
		{head + "```dynops\nstep: a\n", "runbook t line 5: the fenced block is not closed"},
	}
	for _, c := range cases {
		_, err := Parse("t", c.md)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("err = %v, want it to start with %q", err, c.want)
		}
	}
}

func TestParseParamDefaults(t *testing.T) {
	md := "# T\n```dynops-params\nmode: [default: --latest]\nwhen: the time [default: now]\nplain: a value\nodd: [default: x] and more\n```\n```dynops\nstep: a\nrun: dynops check {{mode}} {{when}} {{plain}} {{odd}}\n```\n"
	rb, err := Parse("t", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{Name: "mode", Description: "", Default: "--latest", HasDefault: true},
		{Name: "when", Description: "the time", Default: "now", HasDefault: true},
		{Name: "plain", Description: "a value"},
		{Name: "odd", Description: "[default: x] and more"},
	}
	for i, p := range want {
		if rb.Params[i] != p {
			t.Errorf("param %d = %+v, want %+v", i, rb.Params[i], p)
		}
	}
}

// TestEveryPlaceholderIsChecked: not only the first placeholder of a step
// must be known.
func TestEveryPlaceholderIsChecked(t *testing.T) {
	params := "# T\n```dynops-params\ntable: t\n```\n"
	for _, run := range []string{"check --table {{table}} --x {{nope}}", "check {{table}} {{table}} {{nope}}", "check {{nope}} {{table}}"} {
		_, err := Parse("t", params+"```dynops\nstep: a\nrun: dynops "+run+"\n```\n")
		if err == nil || !strings.Contains(err.Error(), "{{nope}} is neither") {
			t.Errorf("run %q: err = %v, want {{nope}} refused", run, err)
		}
	}
	_, err := Parse("t", params+"```dynops\nstep: a\nrun: dynops check\ncheck: .a == {{table}}\ncheck: .b == {{nope}}\n```\n")
	if err == nil || !strings.Contains(err.Error(), "{{nope}}") {
		t.Errorf("second check's placeholder: err = %v", err)
	}
}

// TestRunShowsEachStep: the step headers on stderr count the steps, carry
// the heading when there is one, and say which steps were done earlier.
func TestRunShowsEachStep(t *testing.T) {
	rb := threeSteps(t)
	fe := &fakeExec{outs: map[string]string{"check a": `{}`, "check b": `{}`, "check c": `{}`}}
	var stderr bytes.Buffer
	r := newRunner(t, t.TempDir(), fe, nil, true)
	r.ErrOut, r.Until = &stderr, "first"
	if sum, err := r.Run(context.Background(), rb); err != nil || sum.Complete || len(fe.calls) != 0 {
		t.Fatalf("--until first: %+v %v calls %q", sum, err, fe.calls)
	}
	r.Until, r.Through = "", "first"
	if sum, err := r.Run(context.Background(), rb); err != nil || sum.Complete || len(fe.calls) != 1 {
		t.Fatalf("--through first: %+v %v calls %q", sum, err, fe.calls)
	}
	if want := "Resuming t for incident INC-1: no step done yet (3 to run).\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q (not \"0 of 3 step(s) done ()\")", stderr.String(), want)
	}
	stderr.Reset()
	r.Through = ""
	sum, err := r.Run(context.Background(), rb)
	if err != nil || !sum.Complete || len(fe.calls) != 3 {
		t.Fatalf("resume: %+v %v calls %q", sum, err, fe.calls)
	}
	for _, want := range []string{"Resuming t for incident INC-1: 1 of 3 step(s) done (first).", "\n== step 1/3 first: done earlier, skipped\n", "\n== step 2/3 second (Second part)\n", "$ dynops check b\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

func threeSteps(t *testing.T) *Runbook {
	t.Helper()
	md := "```dynops\nstep: first\nrun: dynops check a\n```\n## Second part\n```dynops\nstep: second\nrun: dynops check b\n```\n```dynops\nstep: third\nrun: dynops check c\n```\n"
	rb, err := Parse("t", md)
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

// TestUntilStopsBeforeThroughAfter: --until STEP stops before STEP runs
// (look first), --through STEP after it; either on a step an earlier run
// finished stops before anything runs; both at once or an unknown step is
// refused; --through the last step is a complete run.
func TestUntilStopsBeforeThroughAfter(t *testing.T) {
	rb := threeSteps(t)
	outs := map[string]string{"check a": `{}`, "check b": `{}`, "check c": `{}`}
	cases := []struct {
		name           string
		until, through string
		earlier        string // a first run's --through, "" for none
		calls          int    // commands run by the second run
		complete       bool
		stderr         string
		refused        string
	}{
		{name: "until the second step runs only the first", until: "second", calls: 1, stderr: "Stopped before step 2/3 second (--until second). Run the same command without --until to go on."},
		{name: "until the first step runs nothing", until: "first", calls: 0, stderr: "Stopped before step 1/3 first (--until first)"},
		{name: "through the second step runs two", through: "second", calls: 2, stderr: "Stopped after step 2/3 second (--through second). Run the same command without --through to go on."},
		{name: "through the last step is complete", through: "third", calls: 3, complete: true},
		{name: "until the last step runs two", until: "third", calls: 2, stderr: "Stopped before step 3/3 third"},
		{name: "until a step done earlier runs nothing", earlier: "second", until: "first", calls: 0, stderr: "Stopped: step first was done earlier, so --until first stops before anything runs"},
		{name: "through again after its stop runs nothing", earlier: "second", through: "second", calls: 0, stderr: "so --through second stops before anything runs. Run the same command without --through to go on."},
		{name: "until after an earlier through goes on to it", earlier: "first", until: "third", calls: 1, stderr: "Stopped before step 3/3 third"},
		{name: "both", until: "second", through: "second", refused: "--until second and --through second: give one"},
		{name: "unknown until", until: "nope", refused: "--until nope: runbook t has no such step (steps: first, second, third)"},
		{name: "unknown through", through: "nope", refused: "--through nope: runbook t has no such step"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.earlier != "" {
				first := newRunner(t, dir, &fakeExec{outs: outs}, nil, true)
				first.Through = c.earlier
				if _, err := first.Run(context.Background(), rb); err != nil {
					t.Fatal(err)
				}
			}
			fe := &fakeExec{outs: outs}
			var stderr bytes.Buffer
			r := newRunner(t, dir, fe, nil, true)
			r.ErrOut, r.Until, r.Through = &stderr, c.until, c.through
			sum, err := r.Run(context.Background(), rb)
			if c.refused != "" {
				var pe *ParamError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.refused) || len(fe.calls) != 0 {
					t.Fatalf("err = %v, calls %q; want a ParamError %q and nothing run", err, fe.calls, c.refused)
				}
				return
			}
			if err != nil || sum.Complete != c.complete || len(fe.calls) != c.calls {
				t.Fatalf("sum %+v, err %v, calls %q; want complete=%v and %d call(s)", sum, err, fe.calls, c.complete, c.calls)
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.stderr)
			}
			if c.complete && strings.Contains(stderr.String(), "Stopped") {
				t.Errorf("stderr %q: a complete run says it stopped", stderr.String())
			}
		})
	}
}

// TestStepWithoutOutput: a step whose command prints nothing passes when it
// reads no output and checks nothing.
func TestStepWithoutOutput(t *testing.T) {
	rb, err := Parse("t", "```dynops\nstep: a\nrun: dynops check quiet\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"", "\n  \n"} {
		fe := &fakeExec{outs: map[string]string{"check quiet": out}}
		sum, err := newRunner(t, t.TempDir(), fe, nil, true).Run(context.Background(), rb)
		if err != nil || !sum.Complete {
			t.Errorf("output %q: %+v %v", out, sum, err)
		}
	}
}

// TestConfirmAnswers: only y or yes (any case, any spaces) runs a
// destructive step for real; everything else stops before it.
func TestConfirmAnswers(t *testing.T) {
	rb, err := Parse("t", "```dynops\nstep: drop\nrun: dynops table drop x\ndestructive: true\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	for answer, run := range map[string]bool{
		"y\n": true, "Y\n": true, "yes\n": true, " YES \n": true, "Yes": true,
		"n\n": false, "\n": false, "no\n": false, "yess\n": false, "y es\n": false, "ok\n": false,
	} {
		fe := &fakeExec{outs: map[string]string{"table drop": `{}`}}
		r := newRunner(t, t.TempDir(), fe, nil, false)
		r.Ask = func(string) (string, error) { return answer, nil }
		_, err := r.Run(context.Background(), rb)
		ran := len(fe.calls) == 2 && strings.Contains(fe.calls[1], "--yes")
		if ran != run {
			t.Errorf("answer %q: ran for real %v, want %v (calls %q, err %v)", answer, ran, run, fe.calls, err)
		}
		if !run && !errors.Is(err, ErrStopped) {
			t.Errorf("answer %q: err %v, want ErrStopped", answer, err)
		}
	}
}

func TestQuoteArgs(t *testing.T) {
	got := quoteArgs([]string{"pitr", "", "a b", "it's", "$HOME", `a"b`, `a\b`, "tab\tx", "plain-1"})
	want := []string{"pitr", "''", "'a b'", `'it'\''s'`, "'$HOME'", `'a"b'`, `'a\b'`, "'tab\tx'", "plain-1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("quoteArgs = %q, want %q", got, want)
	}
}

func TestLineAsker(t *testing.T) {
	cases := []struct {
		in      string
		answers []string
		errAt   int // the answer that is an error (-1: none)
	}{
		{"yes\n", []string{"yes\n"}, -1},
		{"a\nb\n", []string{"a\n", "b\n"}, -1},
		{"last", []string{"last"}, -1}, // the final line without a newline is still an answer
		{"a\n", []string{"a\n", ""}, 1},
		{"", []string{""}, 0},
	}
	for _, c := range cases {
		var prompt bytes.Buffer
		ask := LineAsker(strings.NewReader(c.in), &prompt)
		for i, want := range c.answers {
			got, err := ask("Q? ")
			if i == c.errAt {
				if err == nil || !strings.Contains(err.Error(), "input closed") {
					t.Errorf("input %q answer %d: err %v, want input closed", c.in, i, err)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("input %q answer %d = %q, %v; want %q", c.in, i, got, err, want)
			}
		}
		if prompt.String() != strings.Repeat("Q? ", len(c.answers)) {
			t.Errorf("prompt %q", prompt.String())
		}
	}
}

// TestThroughADecisionOrASkippedStep: --through stops after a decision (its
// choice made and kept) and after a step not on the path taken, as after a
// command.
func TestThroughADecisionOrASkippedStep(t *testing.T) {
	md := "```dynops\nstep: first\nrun: dynops check a\n```\n```dynops\nstep: path\nchoose: repair, cutover\ndefault: repair\n```\n" +
		"```dynops\nstep: cut\nrun: dynops check c\nwhen: path=cutover\n```\n```dynops\nstep: last\nrun: dynops check d\n```\n"
	rb, err := Parse("t", md)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		through string
		calls   int
		stderr  string
	}{
		{"path", 1, "Stopped after step 2/4 path (--through path)"},
		{"cut", 1, "Stopped after step 3/4 cut (--through cut)"},
	} {
		fe := &fakeExec{outs: map[string]string{"check a": `{}`, "check c": `{}`, "check d": `{}`}}
		var stderr bytes.Buffer
		r := newRunner(t, t.TempDir(), fe, nil, true)
		r.ErrOut, r.Through = &stderr, c.through
		sum, err := r.Run(context.Background(), rb)
		if err != nil || sum.Complete || len(fe.calls) != c.calls || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("--through %s: %+v %v calls %q, stderr %q; want %d call(s) and %q", c.through, sum, err, fe.calls, stderr.String(), c.calls, c.stderr)
		}
	}
}
