package runbook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

const sample = "# Demo runbook\n\n```dynops-params\ntable: the table\nmode: --latest or --time T [default: --latest]\n```\n\n" +
	"```sh\nnot a step\n```\n\n## Restore\n\n```dynops\nstep: restore\nrun: dynops pitr restore --table {{table}} {{mode}}\ndestructive: true\nconfirm: {{table}}\noutput: restored = .plan.target\ncheck: .ok == true\n```\n\n" +
	"```dynops\nstep: diff\nrun: dynops table diff --source {{restored}} --target {{table}} --keys-out {{state_dir}}/keys.jsonl\noutput: keys = .keys_out\ncheck: .changed <= 5\n```\n"

func TestParse(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Title != "Demo runbook" || len(rb.Params) != 2 || !rb.Params[1].HasDefault || rb.Params[1].Default != "--latest" || rb.Params[0].HasDefault {
		t.Fatalf("params %+v title %q", rb.Params, rb.Title)
	}
	if len(rb.Steps) != 2 || !rb.Steps[0].Destructive || rb.Steps[0].Outputs[0] != (Output{"restored", ".plan.target"}) || rb.Steps[0].Title != "Restore" {
		t.Fatalf("steps %+v", rb.Steps)
	}
	if rb.Steps[0].Run != "pitr restore --table {{table}} {{mode}}" {
		t.Errorf("run %q: the dynops prefix is dropped", rb.Steps[0].Run)
	}
}

func TestParseErrors(t *testing.T) {
	step := func(body string) string { return "# T\n```dynops\n" + body + "\n```\n" }
	cases := map[string]struct{ md, want string }{
		"no steps":             {"# T\n\n```sh\nls\n```\n", "no ```dynops step blocks"},
		"unclosed":             {"# T\n```dynops\nstep: a\n", "not closed"},
		"no id":                {step("run: dynops check"), "`step: ID` is missing"},
		"bad id":               {step("step: Bad_ID\nrun: dynops check"), "a-z"},
		"duplicate id":         {step("step: a\nrun: dynops check") + step("step: a\nrun: dynops check"), "used twice"},
		"no run":               {step("step: a"), "`run: dynops ...` is missing"},
		"unknown key":          {step("step: a\nrun: dynops check\nfoo: bar"), `unknown key "foo"`},
		"confirm of an output": {step("step: a\nrun: dynops check\noutput: t = .t") + step("step: b\nrun: dynops check\nconfirm: {{t}}"), "is not a param"},
		"confirm unknown":      {step("step: a\nrun: dynops check\nconfirm: {{nope}}"), "is not a param"},
		"not key value":        {step("step: a\ndynops check"), "key: value"},
		"bad destructive":      {step("step: a\nrun: dynops check\ndestructive: maybe"), "not true or false"},
		"bad output":           {step("step: a\nrun: dynops check\noutput: x"), "output: name = .json.path"},
		"bad check":            {step("step: a\nrun: dynops check\ncheck: .a ~ 1"), "OP"},
		"check without dot":    {step("step: a\nrun: dynops check\ncheck: a == 1"), "starts with a dot"},
		"bad allow-exit":       {step("step: a\nrun: dynops check\nallow-exit: x"), "exit codes"},
		"unknown placeholder":  {step("step: a\nrun: dynops check --table {{nope}}"), "{{nope}} is neither"},
		"output used too soon": {step("step: a\nrun: dynops check --table {{later}}") + step("step: b\nrun: dynops check\noutput: later = .x"), "{{later}}"},
		"bad param line":       {"# T\n```dynops-params\nBad Name: x\n```\n" + step("step: a\nrun: dynops check"), "params line 1"},
		"param twice":          {"# T\n```dynops-params\na: x\na: y\n```\n" + step("step: a\nrun: dynops check"), "declared twice"},
		"param is builtin":     {"# T\n```dynops-params\nincident: x\n```\n" + step("step: a\nrun: dynops check"), "builtin"},
		"check placeholder":    {step("step: a\nrun: dynops check\ncheck: .n <= {{max}}"), "{{max}}"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("t", c.md)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	cases := map[string][]string{
		`a b  c`:              {"a", "b", "c"},
		`--tag "k=v w" x`:     {"--tag", "k=v w", "x"},
		`'a "b"' c\ d`:        {`a "b"`, "c d"},
		`--x ""`:              {"--x", ""},
		"":                    nil,
		`pitr restore --time`: {"pitr", "restore", "--time"},
	}
	for in, want := range cases {
		got, err := Split(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("Split(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`"open`, `'open`, `trailing\`} {
		if _, err := Split(bad); err == nil {
			t.Errorf("Split(%q): want an error", bad)
		}
	}
}

func TestLookupAndChecks(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"plan":{"target":"t-restored"},"list":[{"a":1},{"a":2}],"ok":true,"n":3,"m":3,"s":"ENABLED","top":[{"status":"ENABLED"}]}`), &doc)
	lookups := map[string]string{".plan.target": "t-restored", ".list[1].a": "2", ".list[-1].a": "2", ".list.#": "2", ".ok": "true", ".[0]": "", ".top[0].status": "ENABLED"}
	for p, want := range lookups {
		v, ok := Lookup(doc, p)
		if want == "" {
			if ok {
				t.Errorf("Lookup(%s) = %v, want missing", p, v)
			}
			continue
		}
		if !ok || String(v) != want {
			t.Errorf("Lookup(%s) = %v, %v; want %s", p, v, ok, want)
		}
	}
	checks := map[string]bool{
		".n == 3": true, ".n != 3": false, ".n > 2": true, ".n >= 4": false, ".n < 4": true, ".n <= 2": false,
		".ok == true": true, ".s == ENABLED": true, ".s != ENABLED": false, ".s > 1": false, ".plan.target exists": true,
		".nope exists": false, ".nope == 1": false, ".n == .m": true, ".n == .list.#": false, ".n == .nope": false, ".n == x": false,
	}
	for text, want := range checks {
		c, err := parseCheck(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Eval(doc) == nil; got != want {
			t.Errorf("check %q = %v, want %v (%v)", text, got, want, c.Eval(doc))
		}
	}
}

// fakeExec answers each command with a JSON document and records the calls.
type fakeExec struct {
	calls []string
	outs  map[string]string // first word pair -> output
	codes map[string]int
	cut   string // the step at which the "process" dies (ctx cancelled)
}

func (f *fakeExec) exec(_ context.Context, args []string, step string, stdout io.Writer) int {
	f.calls = append(f.calls, step+": "+strings.Join(args, " "))
	key := args[0] + " " + args[1]
	io.WriteString(stdout, f.outs[key])
	return f.codes[key]
}

func newRunner(t *testing.T, dir string, fe *fakeExec, params map[string]string, yes bool) *Runner {
	return &Runner{Exec: fe.exec, Store: FileStore{Dir: dir}, Incident: "INC-1", Params: params, Yes: yes,
		Out: io.Discard, ErrOut: io.Discard, Now: func() time.Time { return time.Date(2026, 11, 21, 9, 35, 12, 0, time.UTC) }}
}

func TestRunCarriesOutputsAndResumes(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fe := &fakeExec{outs: map[string]string{
		"pitr restore": `{"ok":true,"plan":{"target":"prod-a-b-restored"}}`,
		"table diff":   `{"changed":9,"keys_out":"/x/keys.jsonl"}`,
	}}
	r := newRunner(t, dir, fe, map[string]string{"table": "prod-a-b"}, true)
	r.Confirm = []string{"prod-a-b"}
	_, err = r.Run(context.Background(), rb)
	var se *StepError
	if !errors.As(err, &se) || se.Step != "diff" || !strings.Contains(err.Error(), ".changed is 9") {
		t.Fatalf("err = %v; want the diff check to stop the run", err)
	}
	if fe.calls[0] != "restore: pitr restore --table prod-a-b --latest --yes --confirm prod-a-b -o json" {
		t.Errorf("restore call %q", fe.calls[0])
	}
	if !strings.Contains(fe.calls[1], "--source prod-a-b-restored --target prod-a-b --keys-out "+dir) {
		t.Errorf("diff call %q: the restored table and the state dir carried forward", fe.calls[1])
	}
	// Resume: the restore is not run again; the diff is.
	fe.outs["table diff"] = `{"changed":2,"keys_out":"/x/keys.jsonl"}`
	fe.calls = nil
	sum, err := newRunner(t, dir, fe, nil, true).Run(context.Background(), rb)
	if err != nil || !sum.Complete || len(fe.calls) != 1 || !strings.HasPrefix(fe.calls[0], "diff:") || sum.Skipped[0] != "restore" {
		t.Fatalf("resume: %+v %v calls %q", sum, err, fe.calls)
	}
	if sum.Outputs["keys"] != "/x/keys.jsonl" || sum.Outputs["restored"] != "prod-a-b-restored" {
		t.Errorf("outputs %v", sum.Outputs)
	}
	// Each finished step's full output is kept in the state file.
	st, err := FileStore{Dir: dir}.Load(context.Background(), r.Incident, rb.Name)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, st.Results["diff"]); err != nil || compact.String() != `{"changed":2,"keys_out":"/x/keys.jsonl"}` {
		t.Errorf("the diff's output in the state: %s (%v)", st.Results["diff"], err)
	}
	// A different value for a param of the same incident is refused.
	_, err = newRunner(t, dir, fe, map[string]string{"table": "prod-x-y"}, true).Run(context.Background(), rb)
	var pe *ParamError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "already ran") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunWithoutYesStopsAfterTheDryRun(t *testing.T) {
	rb, _ := Parse("demo", sample)
	fe := &fakeExec{outs: map[string]string{"pitr restore": `{"dry_run":true}`}}
	_, err := newRunner(t, t.TempDir(), fe, map[string]string{"table": "dev-a-b"}, false).Run(context.Background(), rb)
	if !errors.Is(err, ErrStopped) || len(fe.calls) != 1 || strings.Contains(fe.calls[0], "--yes") {
		t.Fatalf("err %v calls %q: want one dry run and a stop", err, fe.calls)
	}
	// A person says yes at the prompt: the step runs with --yes.
	fe.calls = nil
	fe.outs["pitr restore"] = `{"ok":true,"plan":{"target":"r"}}`
	fe.outs["table diff"] = `{"changed":0,"keys_out":"k"}`
	r := newRunner(t, t.TempDir(), fe, map[string]string{"table": "dev-a-b"}, false)
	r.Ask = LineAsker(strings.NewReader("\ny\n"), io.Discard) // mode: the default; then yes
	if _, err := r.Run(context.Background(), rb); err != nil || len(fe.calls) != 3 || !strings.Contains(fe.calls[1], "--yes") {
		t.Fatalf("err %v calls %q", err, fe.calls)
	}
}

func TestRunParamErrors(t *testing.T) {
	rb, _ := Parse("demo", sample)
	fe := &fakeExec{}
	_, err := newRunner(t, t.TempDir(), fe, nil, true).Run(context.Background(), rb)
	var pe *ParamError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "--param table=VALUE") || len(fe.calls) != 0 {
		t.Fatalf("missing param: %v, calls %q", err, fe.calls)
	}
	_, err = newRunner(t, t.TempDir(), fe, map[string]string{"table": "a", "tabel": "b"}, true).Run(context.Background(), rb)
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no such parameter") {
		t.Fatalf("unknown param: %v", err)
	}
	// Asked at a terminal.
	var prompt bytes.Buffer
	fe.outs = map[string]string{"pitr restore": `{"ok":true,"plan":{"target":"r"}}`, "table diff": `{"changed":0,"keys_out":"k"}`}
	r := newRunner(t, t.TempDir(), fe, nil, true)
	r.Ask = LineAsker(strings.NewReader("dev-a-b\n\n"), &prompt)
	if _, err := r.Run(context.Background(), rb); err != nil || !strings.Contains(prompt.String(), "table (the table): ") || !strings.Contains(fe.calls[0], "--table dev-a-b --latest") {
		t.Fatalf("err %v prompt %q calls %q", err, prompt.String(), fe.calls)
	}
}

func TestFailingExitStops(t *testing.T) {
	rb, _ := Parse("demo", sample)
	fe := &fakeExec{outs: map[string]string{"pitr restore": `{}`}, codes: map[string]int{"pitr restore": 1}}
	_, err := newRunner(t, t.TempDir(), fe, map[string]string{"table": "a"}, true).Run(context.Background(), rb)
	var se *StepError
	if !errors.As(err, &se) || se.Code != 1 || !strings.Contains(err.Error(), "resumes at this step") {
		t.Fatalf("err %v", err)
	}
}

func TestCheckIncident(t *testing.T) {
	for _, ok := range []string{"INC-1234", "pitr-restore-20261121t093512z", "a.b_c"} {
		if CheckIncident(ok) != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "a b", strings.Repeat("x", 200)} {
		if CheckIncident(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// confirmBook has two steps that change different protected targets, one
// of them named by two params (a queue URL's last part and a function).
const confirmBook = "# Two targets\n\n```dynops-params\nqueue: URL\nfunction: fn [default: ]\ntable: t\nothers: more tables [default: ]\n```\n\n" +
	"```dynops\nstep: look\nrun: dynops dlq inspect --queue {{queue}}\n```\n\n" +
	"```dynops\nstep: redrive\nrun: dynops dlq redrive --queue {{queue}}\ndestructive: true\nconfirm: {{queue|basename}}, {{function}}\n```\n\n" +
	"```dynops\nstep: restore\nrun: dynops pitr restore --table {{table}}\ndestructive: true\nconfirm: {{table}},{{others}}\n```\n"

// TestConfirmsGoToTheStepsTheyName is decision logic (which --confirm
// values each step gets), so it uses the recording fake Exec; the emulator
// suite test/cli/runbook runs the real runbooks on prod-tagged targets.
func TestConfirmsGoToTheStepsTheyName(t *testing.T) {
	rb, err := Parse("two", confirmBook)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"queue": "https://sqs.eu-west-1.amazonaws.com/1/prod-q-dlq", "function": "prod-fn", "table": "prod-t", "others": "prod-u, prod-v"}
	cases := []struct {
		name    string
		confirm []string
		want    []string // the calls of the three steps
		wantErr string
	}{
		{name: "each step gets only its own names", confirm: []string{"prod-t", "prod-q-dlq", "prod-fn"}, want: []string{
			"look: dlq inspect --queue " + params["queue"] + " -o json",
			"redrive: dlq redrive --queue " + params["queue"] + " --yes --confirm prod-q-dlq --confirm prod-fn -o json",
			"restore: pitr restore --table prod-t --yes --confirm prod-t -o json"}},
		{name: "a comma-separated param is several targets", confirm: []string{"prod-v", "prod-u"}, want: []string{
			"look: dlq inspect --queue " + params["queue"] + " -o json",
			"redrive: dlq redrive --queue " + params["queue"] + " --yes -o json",
			"restore: pitr restore --table prod-t --yes --confirm prod-v --confirm prod-u -o json"}},
		{name: "a value naming no target is refused before any step", confirm: []string{"prod-fn", "prod-tt"},
			wantErr: `--confirm "prod-tt" names no target of runbook two; its steps change "prod-q-dlq", "prod-fn", "prod-t", "prod-u", "prod-v"`},
		{name: "the whole URL is not the queue's name", confirm: []string{params["queue"]}, wantErr: "names no target"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := &fakeExec{outs: map[string]string{}}
			r := newRunner(t, t.TempDir(), fe, params, true)
			r.Confirm = c.confirm
			_, err := r.Run(context.Background(), rb)
			if c.wantErr != "" {
				var pe *ParamError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v; want a ParamError with %q", err, c.wantErr)
				}
				if len(fe.calls) != 0 {
					t.Fatalf("steps ran before the refusal: %q", fe.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(fe.calls, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("calls\n%s\nwant\n%s", strings.Join(fe.calls, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestStopNamesTheTargetsToConfirm: without --yes and a terminal the run
// stops before the destructive step and says which names to confirm.
func TestStopNamesTheTargetsToConfirm(t *testing.T) {
	rb, err := Parse("two", confirmBook)
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	fe := &fakeExec{outs: map[string]string{}}
	r := newRunner(t, t.TempDir(), fe, map[string]string{"queue": "https://q/1/prod-q", "function": "prod-fn", "table": "prod-t"}, false)
	r.ErrOut = &errOut
	if _, err := r.Run(context.Background(), rb); !errors.Is(err, ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
	if !strings.Contains(errOut.String(), "--confirm prod-q,prod-fn") {
		t.Errorf("stop message %q does not name the targets to confirm", errOut.String())
	}
}

// TestParamChangeOnResume is decision logic on the saved state (which
// parameter changes a resume accepts), with the recording fake Exec.
func TestParamChangeOnResume(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The restore refuses its --time (exit 2: bad input, nothing changed).
	fe := &fakeExec{outs: map[string]string{"pitr restore": `{"ok":true,"plan":{"target":"prod-a-b-restored"}}`,
		"table diff": `{"changed":0,"keys_out":"/k"}`}, codes: map[string]int{"pitr restore": 2}}
	_, err = newRunner(t, dir, fe, map[string]string{"table": "dev-a-b", "mode": "--time T0"}, true).Run(context.Background(), rb)
	var se *StepError
	if !errors.As(err, &se) || se.Step != "restore" || se.Code != 2 {
		t.Fatalf("err = %v; want the restore refused", err)
	}
	// The same incident with a corrected --time: accepted and recorded.
	fe.codes, fe.calls = nil, nil
	var changed []ParamChange
	r := newRunner(t, dir, fe, map[string]string{"mode": "--time T1"}, true)
	r.Changed = func(c ParamChange) { changed = append(changed, c) }
	sum, err := r.Run(context.Background(), rb)
	if err != nil || !sum.Complete || !strings.Contains(fe.calls[0], "--time T1") {
		t.Fatalf("corrected resume: %v %+v calls %q", err, sum, fe.calls)
	}
	if len(changed) != 1 || changed[0].Old != "--time T0" || changed[0].New != "--time T1" {
		t.Errorf("changes %+v", changed)
	}
	st, err := FileStore{Dir: dir}.Load(context.Background(), "INC-1", "demo")
	if err != nil || len(st.Changes) != 1 || st.Changes[0].Name != "mode" {
		t.Fatalf("state changes %+v %v: the change is in the state file", st, err)
	}
	// The restore has now run for real: changing its --time is refused, naming it.
	_, err = newRunner(t, dir, fe, map[string]string{"mode": "--time T2"}, true).Run(context.Background(), rb)
	var pe *ParamError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "step restore of incident INC-1 already ran with mode=--time T1") {
		t.Fatalf("err = %v; want the change refused naming the restore", err)
	}
	// --restart-from runs the finished steps from there again.
	fe.calls = nil
	var again []string
	r = newRunner(t, dir, fe, nil, true)
	r.RestartFrom, r.Restarted = "diff", func(_ string, a []string) { again = a }
	if sum, err := r.Run(context.Background(), rb); err != nil || len(fe.calls) != 1 || !strings.HasPrefix(fe.calls[0], "diff:") || sum.Skipped[0] != "restore" {
		t.Fatalf("restart-from: %v calls %q", err, fe.calls)
	}
	if len(again) != 1 || again[0] != "diff" {
		t.Errorf("restarted %q", again)
	}
	r = newRunner(t, dir, fe, nil, true)
	r.RestartFrom = "nope"
	if _, err := r.Run(context.Background(), rb); !errors.As(err, &pe) || !strings.Contains(err.Error(), "steps: restore, diff") {
		t.Errorf("unknown --restart-from: %v", err)
	}
}
