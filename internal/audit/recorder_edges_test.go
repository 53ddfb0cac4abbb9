package audit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

type fakeSink struct{ got []Record }

func (s *fakeSink) Put(_ context.Context, rec Record) error { s.got = append(s.got, rec); return nil }
func (s *fakeSink) Name() string                            { return "fake" }

// TestSinkGetsEveryRecord: the central copy receives each record once the
// local write succeeded: started and finished, late started included.
func TestSinkGetsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	for _, start := range []bool{true, false} {
		sink := &fakeSink{}
		r := newTestRecorder(t, filepath.Join(dir, "audit.jsonl"))
		r.o.Sink = sink
		if start {
			must(t, r.Start(context.Background(), Plan{}))
		}
		must(t, r.Finish(context.Background(), Outcome{}))
		if len(sink.got) != 2 || sink.got[0].Event != EventStarted || sink.got[1].Event != EventFinished || sink.got[0].Late == start {
			t.Errorf("Start called %v: the sink got %+v, want started (late: %v) and finished", start, sink.got, !start)
		}
	}
}

// TestStartedRecordTargets: the plan's targets replace the command's in the
// `started` record; a plan without targets keeps the command's.
func TestStartedRecordTargets(t *testing.T) {
	for _, c := range []struct {
		plan Plan
		want []string
	}{
		{Plan{}, []string{"prod-hoge-user"}},
		{Plan{Targets: []string{"a", "b"}}, []string{"a", "b"}},
	} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		r := newTestRecorder(t, path)
		must(t, r.Start(context.Background(), c.plan))
		recs, err := Read(path)
		must(t, err)
		if len(recs) != 1 || !slices.Equal(recs[0].Targets, c.want) {
			t.Errorf("plan %+v: started record %+v, want targets %q", c.plan, recs, c.want)
		}
	}
}

// TestFinishWithoutStartMarksStarted: a run that only finished (read-only,
// dry run) has its late `started` record, and says so.
func TestFinishWithoutStartMarksStarted(t *testing.T) {
	r := newTestRecorder(t, filepath.Join(t.TempDir(), "audit.jsonl"))
	must(t, r.Finish(context.Background(), Outcome{}))
	if !r.Started() {
		t.Error("Started() after a Finish that wrote the late started record: false")
	}
}

// TestFinishClosesTheLog: many runs leave no audit log file open.
func TestFinishClosesTheLog(t *testing.T) {
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("counting open files: %v", err)
		}
		return len(es)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	before := fds()
	for range 50 {
		r := newTestRecorder(t, path)
		must(t, r.Start(context.Background(), Plan{}))
		must(t, r.Finish(context.Background(), Outcome{}))
	}
	if after := fds(); after > before+5 {
		t.Errorf("%d files open after 50 runs, %d before: Finish leaves the audit log open", after, before)
	}
}
