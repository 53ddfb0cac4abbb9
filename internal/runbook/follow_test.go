package runbook

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func stepHeaders(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "== step ") || strings.HasPrefix(l, "   result: ") || strings.HasPrefix(l, "   output ") {
			out = append(out, l)
		}
	}
	return out
}

// TestFollowerPrintsTheRunnersLines: a follower shown the states a run
// saves prints the step, result and output lines the run printed.
func TestFollowerPrintsTheRunnersLines(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	fe := &fakeExec{outs: map[string]string{
		"pitr restore": `{"ok":true,"plan":{"target":"prod-a-b-restored"}}`,
		"table diff":   `{"changed":2,"keys_out":"/x/keys.jsonl"}`,
	}}
	dir := t.TempDir()
	r := newRunner(t, dir, fe, map[string]string{"table": "prod-a-b"}, true)
	var ran, followed strings.Builder
	r.ErrOut, r.Summarize = &ran, true
	store := FileStore{Dir: dir}
	f := &Follower{Runbook: rb, ErrOut: &followed}
	r.Exec = func(ctx context.Context, args []string, step string, stdout io.Writer) int {
		st, _ := store.Load(ctx, r.Incident, rb.Name) // the state the task saved before the step
		f.Show(st)
		return fe.exec(ctx, args, step, stdout)
	}
	if _, err := r.Run(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	st, _ := store.Load(context.Background(), r.Incident, rb.Name)
	f.Show(st)
	f.Show(st) // nothing twice
	want, got := stepHeaders(ran.String()), stepHeaders(followed.String())
	if strings.Join(want, "\n") != strings.Join(got, "\n") || len(got) != 6 {
		t.Fatalf("followed:\n%s\nran:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunRecordsHowItEnded: with Outcome, a run records its end in its
// state (what a terminal following it reads), and a resumed run clears it;
// a run refused before its first save writes no state.
func TestRunRecordsHowItEnded(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store := FileStore{Dir: dir}
	outcome := func(sum *Summary, err error) (int, string) {
		if err != nil {
			return 7, "failed: " + err.Error()
		}
		return 0, "complete"
	}
	fe := &fakeExec{outs: map[string]string{"pitr restore": `{"ok":true,"plan":{"target":"t2"}}`, "table diff": `{"changed":9}`}}
	r := newRunner(t, dir, fe, map[string]string{"table": "prod-a-b"}, true)
	r.Outcome = outcome
	if _, err := r.Run(context.Background(), rb); err == nil {
		t.Fatal("the diff's check should stop the run")
	}
	st, _ := store.Load(context.Background(), "INC-1", "demo")
	if st == nil || st.Ended == nil || st.Ended.Code != 7 || !strings.Contains(st.Ended.Why, ".changed is 9") {
		t.Fatalf("ended: %+v", st)
	}
	var seen *Ended
	fe.outs["table diff"] = `{"changed":1,"keys_out":"k"}`
	r = newRunner(t, dir, fe, nil, true)
	r.Outcome = func(sum *Summary, err error) (int, string) {
		cur, _ := store.Load(context.Background(), "INC-1", "demo")
		seen = cur.Ended
		return outcome(sum, err)
	}
	if _, err := r.Run(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	st, _ = store.Load(context.Background(), "INC-1", "demo")
	if seen != nil || st.Ended == nil || st.Ended.Code != 0 {
		t.Fatalf("a resumed run clears the earlier end (%+v) and records its own (%+v)", seen, st.Ended)
	}

	other := t.TempDir()
	r = newRunner(t, other, fe, map[string]string{"nope": "x"}, true)
	r.Outcome = outcome
	var pe *ParamError
	if _, err := r.Run(context.Background(), rb); !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if st, _ := (FileStore{Dir: other}).Load(context.Background(), "INC-1", "demo"); st != nil {
		t.Fatalf("a refused run wrote a state: %+v", st)
	}
}

// TestPreflightRefusesWhatTheRunWould: a run in AWS is refused on the
// terminal for an unknown --param, --until or --decide.
func TestPreflightRefusesWhatTheRunWould(t *testing.T) {
	rb, err := Parse("demo", sample)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Runner{{Params: map[string]string{"tabel": "x"}}, {Until: "nope"}, {Decide: map[string]string{"x": "y"}}} {
		var pe *ParamError
		if err := r.Preflight(rb); !errors.As(err, &pe) {
			t.Errorf("%+v: err = %v", r, err)
		}
	}
	if err := (&Runner{Params: map[string]string{"table": "x"}, Until: "diff"}).Preflight(rb); err != nil {
		t.Error(err)
	}
}
