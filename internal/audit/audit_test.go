package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func okCaller(context.Context) (Caller, error) {
	return Caller{ARN: "arn:aws:iam::123456789012:user/oncall", Account: "123456789012"}, nil
}

func newTestRecorder(t *testing.T, path string) *Recorder {
	t.Helper()
	clock := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	r := New(Options{Path: path, Now: func() time.Time { clock = clock.Add(time.Second); return clock },
		Caller: okCaller, Identity: Identity{Version: "1.2.3", Profile: "prod-oncall", Endpoint: "http://127.0.0.1:1"},
		Tags: Tags{Incident: "INC-1"}})
	r.SetCommand("dynops pitr repair", map[string]string{"to": "prod-hoge-user", "yes": "true"}, []string{"prod-hoge-user"})
	r.AddRegion("eu-west-1")
	return r
}

func TestStartedThenFinishedShareARunIDAndIdentity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "audit.jsonl")
	r := newTestRecorder(t, path)
	if err := r.Start(context.Background(), Plan{Counts: map[string]int64{"missing": 2, "changed": 3}}); err != nil {
		t.Fatal(err)
	}
	recs, err := Read(path)
	if err != nil || len(recs) != 1 || recs[0].Event != EventStarted {
		t.Fatalf("after Start: %+v, %v; want one started record on disk before any write", recs, err)
	}
	r.Act("repair-items", "prod-hoge-user", map[string]int{"copied": 5})
	r.Counts(map[string]int64{"copied": 5, "conflicts": 1})
	if err := r.Finish(context.Background(), Outcome{ExitCode: 1}); err != nil {
		t.Fatal(err)
	}
	recs, err = Read(path)
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	s, f := recs[0], recs[1]
	if s.RunID == "" || s.RunID != f.RunID || f.Event != EventFinished {
		t.Fatalf("run ids %q %q, events %s %s", s.RunID, f.RunID, s.Event, f.Event)
	}
	for _, rec := range recs {
		id := rec.Identity
		if id.CallerARN != "arn:aws:iam::123456789012:user/oncall" || id.Account != "123456789012" || id.Profile != "prod-oncall" ||
			id.Endpoint == "" || id.Version != "1.2.3" || id.Host == "" || id.OSUser == "" || len(id.Regions) != 1 || rec.Incident != "INC-1" {
			t.Errorf("%s identity %+v incident %q", rec.Event, id, rec.Incident)
		}
	}
	if s.Plan == nil || s.Plan.Counts["changed"] != 3 {
		t.Errorf("started plan %+v", s.Plan)
	}
	if f.Result != ResultFindings || *f.ExitCode != 1 || f.Counts["conflicts"] != 1 || f.Error != "" || *f.DurationMS <= 0 || len(f.Actions) != 1 {
		t.Errorf("finished %+v: want findings, exit 1, counts as data, no error string, a duration, one action", f)
	}
}

func TestResults(t *testing.T) {
	cases := []struct {
		o    Outcome
		want string
	}{
		{Outcome{}, ResultOK},
		{Outcome{DryRun: true}, ResultDryRun},
		{Outcome{ExitCode: 1}, ResultFindings},
		{Outcome{ExitCode: 1, Err: errors.New("boom")}, ResultFailed},
		{Outcome{ExitCode: 2, Refused: true, Err: errors.New("bad flag")}, ResultRefused},
	}
	for _, c := range cases {
		if got := resultOf(c.o); got != c.want {
			t.Errorf("resultOf(%+v) = %s, want %s", c.o, got, c.want)
		}
	}
}

func TestStartRefusesWhenTheCallerIsUnknown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	r := New(Options{Path: path, Caller: func(context.Context) (Caller, error) { return Caller{}, errors.New("no credentials") }})
	err := r.Start(context.Background(), Plan{})
	if !errors.Is(err, ErrNotAudited) || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("Start = %v; want ErrNotAudited naming the cause", err)
	}
	// A read-only run still gets its records, with the reason.
	if err := r.Finish(context.Background(), Outcome{}); err != nil {
		t.Fatal(err)
	}
	recs, _ := Read(path)
	if len(recs) != 2 || recs[0].Identity.CallerError == "" || !recs[0].Late {
		t.Fatalf("records %+v", recs)
	}
}

// The log's safety rules, as a class: every unsafe shape is refused by
// Start (so a destructive command does not act), and nothing is written
// through it.
func TestUnsafeLogsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the --audit-log path
		want  string
	}{
		{"symlink to a file", func(t *testing.T, dir string) string {
			target := filepath.Join(dir, "elsewhere")
			must(t, os.WriteFile(target, nil, 0o600))
			must(t, os.Symlink(target, filepath.Join(dir, "audit.jsonl")))
			return filepath.Join(dir, "audit.jsonl")
		}, "symlink"},
		{"dangling symlink", func(t *testing.T, dir string) string {
			must(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "audit.jsonl")))
			return filepath.Join(dir, "audit.jsonl")
		}, "symlink"},
		{"symlinked parent directory", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			must(t, os.Mkdir(real, 0o700))
			must(t, os.Symlink(real, filepath.Join(dir, "link")))
			return filepath.Join(dir, "link", "audit.jsonl")
		}, "symlink"},
		{"existing file 0644", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "audit.jsonl")
			must(t, os.WriteFile(p, nil, 0o600))
			must(t, os.Chmod(p, 0o644))
			return p
		}, "looser than 0600"},
		{"existing file 0660", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "audit.jsonl")
			must(t, os.WriteFile(p, nil, 0o600))
			must(t, os.Chmod(p, 0o660))
			return p
		}, "looser than 0600"},
		{"directory instead of a file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "audit.jsonl")
			must(t, os.Mkdir(p, 0o700))
			return p
		}, "audit log"},
		{"group-writable parent without sticky bit", func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "shared")
			must(t, os.Mkdir(d, 0o700))
			must(t, os.Chmod(d, 0o775))
			return filepath.Join(d, "audit.jsonl")
		}, "chmod go-w"},
		{"parent is a file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "file")
			must(t, os.WriteFile(p, nil, 0o600))
			return filepath.Join(p, "audit.jsonl")
		}, "audit log directory"},
		{"empty path", func(t *testing.T, dir string) string { return "" }, "--audit-log"},
		{"symlinked ancestor two levels up", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			must(t, os.MkdirAll(filepath.Join(real, "logs"), 0o700))
			must(t, os.Symlink(real, filepath.Join(dir, "link")))
			return filepath.Join(dir, "link", "logs", "audit.jsonl")
		}, "symlink"},
		{"symlinked ancestor with missing directories below it", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			must(t, os.Mkdir(real, 0o700))
			must(t, os.Symlink(real, filepath.Join(dir, "link")))
			return filepath.Join(dir, "link", "new", "deeper", "audit.jsonl")
		}, "symlink"},
		{"hard link to another file", func(t *testing.T, dir string) string {
			target := filepath.Join(dir, "elsewhere")
			must(t, os.WriteFile(target, nil, 0o600))
			must(t, os.Link(target, filepath.Join(dir, "audit.jsonl")))
			return filepath.Join(dir, "audit.jsonl")
		}, "hard links"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			r := New(Options{Path: path, Caller: okCaller})
			err := r.Start(context.Background(), Plan{})
			if !errors.Is(err, ErrNotAudited) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start = %v; want ErrNotAudited mentioning %q", err, c.want)
			}
			if target := filepath.Join(dir, "elsewhere"); fileSize(target) > 0 {
				t.Fatal("a record was written through the symlink")
			}
		})
	}
}

func TestNewLogIsCreated0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	r := newTestRecorder(t, path)
	must(t, r.Start(context.Background(), Plan{}))
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
	}
}

// Concurrent runs append whole lines: every line parses, none interleave.
func TestConcurrentRunsAppendWholeRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newTestRecorder(t, path)
			r.Act("big", "t", map[string]string{"pad": strings.Repeat("x", 64<<10)})
			if err := r.Start(context.Background(), Plan{}); err != nil {
				t.Error(err)
			}
			if err := r.Finish(context.Background(), Outcome{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	recs, err := Read(path)
	if err != nil || len(recs) != 40 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	runs := Runs(recs)
	if len(runs) != 20 {
		t.Fatalf("%d runs, want 20", len(runs))
	}
	for _, r := range runs {
		if r.Interrupted() {
			t.Errorf("run %s reads as interrupted", r.RunID)
		}
	}
}

func TestItemImagesNeverLoggedAndKeysHashedOnRequest(t *testing.T) {
	detail := map[string]any{
		"key":       map[string]any{"user_id": map[string]string{"S": "user_001"}},
		"records":   []any{map[string]any{"keys": `{"user_id":{"S":"user_002"}}`, "NewImage": map[string]any{"email": "a@example.com"}}},
		"Item":      map[string]any{"email": "b@example.com"},
		"body":      "raw message with c@example.com",
		"payload":   map[string]any{"Records": "d@example.com"},
		"old_image": "e@example.com",
		"count":     3,
	}
	for _, hash := range []bool{false, true} {
		out, _ := json.Marshal(sanitize(detail, hash))
		for _, email := range []string{"a@", "b@", "c@", "d@", "e@"} {
			if bytes.Contains(out, []byte(email)) {
				t.Errorf("hash=%v: item image %s logged: %s", hash, email, out)
			}
		}
		hasKeys := bytes.Contains(out, []byte("user_001")) || bytes.Contains(out, []byte("user_002"))
		if hash == hasKeys {
			t.Errorf("hash=%v: key values present=%v: %s", hash, hasKeys, out)
		}
		if !bytes.Contains(out, []byte(`"count":3`)) {
			t.Errorf("other fields must stay: %s", out)
		}
	}
	if HashValue("k") != HashValue("k") || HashValue("k") == HashValue("l") {
		t.Error("hashes must be stable and distinct")
	}
}

func TestInterruptedRunsAndTimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	done := newTestRecorder(t, path)
	must(t, done.Start(context.Background(), Plan{}))
	done.Act("restore-table", "prod-hoge-user-restored", nil)
	must(t, done.Finish(context.Background(), Outcome{}))
	killed := newTestRecorder(t, path)
	killed.SetTags(Tags{Incident: "INC-1", Runbook: "pitr-restore", Step: "repair"})
	must(t, killed.Start(context.Background(), Plan{Counts: map[string]int64{"changed": 3}}))
	// no Finish: SIGKILL
	other := newTestRecorder(t, path)
	other.SetTags(Tags{Incident: "INC-2"})
	must(t, other.Finish(context.Background(), Outcome{DryRun: true}))

	recs, err := Read(path)
	must(t, err)
	runs := Filter{Incident: "INC-1"}.Select(Runs(recs))
	if len(runs) != 2 || runs[0].Result != ResultOK || !runs[1].Interrupted() {
		t.Fatalf("runs %+v", runs)
	}
	var b strings.Builder
	must(t, WriteTimeline(&b, "INC-1", runs))
	md := b.String()
	for _, want := range []string{"# Incident INC-1: timeline", "| time (UTC) | who |", "arn:aws:iam::123456789012:user/oncall",
		"restore-table prod-hoge-user-restored", "INTERRUPTED", "planned: changed 3", "- pitr-restore / repair: interrupted — INTERRUPTED 1 time(s)"} {
		if !strings.Contains(md, want) {
			t.Errorf("timeline lacks %q:\n%s", want, md)
		}
	}
}

func TestReadSkipsATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	must(t, os.WriteFile(path, []byte(`{"event":"started","run_id":"a"}`+"\n"+`{"event":"fini`), 0o600))
	recs, err := Read(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v %v", recs, err)
	}
	must(t, os.WriteFile(path, []byte(`{"event":"sta`+"\n"+`{"event":"started","run_id":"a"}`+"\n"), 0o600))
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad line in the middle: %v", err)
	}
}

func TestDefaultPathFollowsXDG(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	p, err := DefaultPath()
	if err != nil || p != "/var/state/dynops/audit.jsonl" {
		t.Fatalf("DefaultPath = %q, %v", p, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// A run without `finished` whose process is alive on this host is running,
// not interrupted; a dead one, or one of another host, is interrupted.
func TestMarkRunning(t *testing.T) {
	runs := []Run{
		{RunID: "alive", Result: ResultInterrupted, Identity: Identity{Host: "h", PID: 10}},
		{RunID: "dead", Result: ResultInterrupted, Identity: Identity{Host: "h", PID: 11}},
		{RunID: "other host", Result: ResultInterrupted, Identity: Identity{Host: "g", PID: 10}},
		{RunID: "finished", Result: ResultOK, Identity: Identity{Host: "h", PID: 10}},
	}
	MarkRunning(runs, "h", func(pid int) bool { return pid == 10 })
	want := []string{ResultRunning, ResultInterrupted, ResultInterrupted, ResultOK}
	for i, r := range runs {
		if r.Result != want[i] {
			t.Errorf("%s: %s, want %s", r.RunID, r.Result, want[i])
		}
	}
	if !DynopsAlive(os.Getpid()) || DynopsAlive(1<<30) {
		t.Error("DynopsAlive: this process is alive, a pid that cannot exist is not")
	}
}

func TestParamRedactsImagesAndHashesKeyValues(t *testing.T) {
	for _, name := range []string{"item", "set", "condition-values"} {
		if got := Param(name, `{"secret": "x"}`, false); got != Redacted {
			t.Errorf("--%s written as %q", name, got)
		}
	}
	if got := Param("key", `{"id": "u1"}`, true); !strings.HasPrefix(got, "sha256:") {
		t.Errorf("--key with --audit-hash-keys written as %q", got)
	}
	if got := Param("key", `{"id": "u1"}`, false); got != `{"id": "u1"}` {
		t.Errorf("--key without --audit-hash-keys written as %q", got)
	}
	// key names (table diff --key) and a keys file path stay as given
	if got := Param("key", "[pk,sk]", true); got != "[pk,sk]" {
		t.Errorf("--key names written as %q", got)
	}
	if got := Param("keys", "/tmp/keys.jsonl", true); got != "/tmp/keys.jsonl" {
		t.Errorf("--keys file written as %q", got)
	}
	if got := Param("table", "prod-a-b", true); got != "prod-a-b" {
		t.Errorf("--table written as %q", got)
	}
}
