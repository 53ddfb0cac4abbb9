package audit

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestWriteTimelineSteps: the whole timeline of an incident with runbook
// steps, exactly: step rows prefixed, each step's attempts and
// interruptions counted, and the closing count of interrupted runs; a
// timeline without steps or interruptions has neither section.
func TestWriteTimelineSteps(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 11, 21, 3, min, 0, 0, time.UTC) }
	id := Identity{CallerARN: "arn:aws:iam::123456789012:user/oncall", OSUser: "oncall", Host: "bastion", Account: "123456789012", Regions: []string{"eu-west-1"}}
	step := func(min int, name, result string) Run {
		return Run{Time: at(min), Identity: id, Tags: Tags{Incident: "INC-1", Runbook: "pitr-restore", Step: name}, Command: "pitr " + name, Result: result}
	}
	runs := []Run{
		{Time: at(0), Identity: id, Command: "check", Result: ResultOK},
		step(1, "restore", ResultInterrupted),
		step(2, "restore", ResultOK),
		step(3, "repair", ResultOK),
		step(4, "verify", ResultOK),
		step(5, "verify", ResultOK),
		step(6, "verify", ResultInterrupted),
	}
	var b strings.Builder
	must(t, WriteTimeline(&b, "INC-1", runs))
	got := b.String()
	want := `# Incident INC-1: timeline

7 dynops run(s) from 2026-11-21T03:00:00Z to 2026-11-21T03:06:00Z (UTC).

| time (UTC) | who | account / region | command | result | what changed |
|---|---|---|---|---|---|
| 2026-11-21 03:00:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`check`" + ` | ok | nothing |
| 2026-11-21 03:01:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / restore] pitr restore`" + ` | INTERRUPTED (started, never finished: killed or crashed) | unknown: it may have written before it stopped |
| 2026-11-21 03:02:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / restore] pitr restore`" + ` | ok | nothing |
| 2026-11-21 03:03:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / repair] pitr repair`" + ` | ok | nothing |
| 2026-11-21 03:04:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / verify] pitr verify`" + ` | ok | nothing |
| 2026-11-21 03:05:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / verify] pitr verify`" + ` | ok | nothing |
| 2026-11-21 03:06:00 | arn:aws:iam::123456789012:user/oncall (oncall@bastion) | 123456789012 eu-west-1 | ` + "`[pitr-restore / verify] pitr verify`" + ` | INTERRUPTED (started, never finished: killed or crashed) | unknown: it may have written before it stopped |

## Runbook steps

- pitr-restore / restore: ok — INTERRUPTED 1 time(s), 2 attempt(s)
- pitr-restore / repair: ok
- pitr-restore / verify: interrupted — INTERRUPTED 1 time(s), 3 attempt(s)

2 run(s) INTERRUPTED: each has a ` + "`started`" + ` record and no ` + "`finished`" + `; check what it may have changed.
`
	if got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}

	// Two attempts, none interrupted; no step at all; nothing interrupted.
	b.Reset()
	must(t, WriteTimeline(&b, "", []Run{step(1, "restore", ResultFailed), step(2, "restore", ResultOK)}))
	if got := b.String(); !strings.Contains(got, "- pitr-restore / restore: ok — 2 attempt(s)\n") || strings.Contains(got, "INTERRUPTED") {
		t.Errorf("two attempts:\n%s", got)
	}
	b.Reset()
	must(t, WriteTimeline(&b, "", runs[:1]))
	if got := b.String(); strings.Contains(got, "Runbook steps") || strings.Contains(got, "INTERRUPTED") || strings.Contains(got, "[") {
		t.Errorf("a timeline without steps or interruptions:\n%s", got)
	}
}

// TestRunStates: Finished, Interrupted and running are exclusive.
func TestRunStates(t *testing.T) {
	for result, want := range map[string][2]bool{ResultOK: {true, false}, ResultFailed: {true, false}, ResultInterrupted: {false, true}, ResultRunning: {false, false}} {
		r := Run{Result: result}
		if r.Finished() != want[0] || r.Interrupted() != want[1] {
			t.Errorf("%s: Finished %v Interrupted %v, want %v", result, r.Finished(), r.Interrupted(), want)
		}
	}
}

// TestMarkRunningNeedsAPID: a record without a PID (0) is never taken for
// a live process, whatever the liveness check says.
func TestMarkRunningNeedsAPID(t *testing.T) {
	runs := []Run{{RunID: "no pid", Result: ResultInterrupted, Identity: Identity{Host: "h"}}}
	MarkRunning(runs, "h", func(int) bool { return true })
	if runs[0].Result != ResultInterrupted {
		t.Errorf("a run without a PID: %s, want interrupted", runs[0].Result)
	}
}

// TestRunsTakeTheFinishedRecordsContext: the `finished` record's command,
// parameters, targets and identity win over the `started` one's.
func TestRunsTakeTheFinishedRecordsContext(t *testing.T) {
	recs := []Record{
		{Time: time.Unix(1, 0), Event: EventStarted, RunID: "r", Command: "pitr repair", Params: map[string]string{"table": "a"}, Targets: []string{"a"}, Identity: Identity{PID: 1}},
		{Time: time.Unix(2, 0), Event: EventFinished, RunID: "r", Command: "pitr repair", Params: map[string]string{"table": "a", "yes": "true"}, Targets: []string{"a", "b"}, Identity: Identity{PID: 1, CallerARN: "arn:x"}, Result: ResultOK},
	}
	runs := Runs(recs)
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	r := runs[0]
	if r.Params["yes"] != "true" || len(r.Targets) != 2 || r.Identity.CallerARN != "arn:x" {
		t.Errorf("run %+v: want the finished record's params, targets and identity", r)
	}
}

// TestCommitOf: the VCS revision, "-dirty" when modified, "" without one.
func TestCommitOf(t *testing.T) {
	s := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{s("vcs.revision", "abc123", "vcs.modified", "false"), "abc123"},
		{s("vcs.revision", "abc123", "vcs.modified", "true"), "abc123-dirty"},
		{s("vcs.modified", "true"), ""},
		{nil, ""},
	} {
		if got := commitOf(c.settings); got != c.want {
			t.Errorf("commitOf(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}
