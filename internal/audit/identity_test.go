package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIdentityDefaultsKeepWhatIsGiven: the record says who ran the command:
// an identity field given by the caller is kept as given, a missing PID is
// this process's, and the written record carries both.
func TestIdentityDefaultsKeepWhatIsGiven(t *testing.T) {
	for _, c := range []struct {
		name       string
		given      Identity
		wantPID    int
		wantCommit string
		wantHost   string
	}{
		{"given", Identity{PID: 4242, Commit: "abc123-dirty", Host: "bastion-1", OSUser: "oncall"}, 4242, "abc123-dirty", "bastion-1"},
		{"defaults", Identity{OSUser: "oncall"}, os.Getpid(), buildCommit(), hostname(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			r := New(Options{Path: path, Now: func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) }, Caller: okCaller, Identity: c.given})
			if err := r.Start(context.Background(), Plan{}); err != nil {
				t.Fatal(err)
			}
			recs, err := Read(path)
			if err != nil || len(recs) != 1 {
				t.Fatalf("records: %+v, %v; want one", recs, err)
			}
			id := recs[0].Identity
			if id.PID != c.wantPID || id.Commit != c.wantCommit || id.Host != c.wantHost || id.OSUser != "oncall" {
				t.Errorf("identity %+v; want pid %d, commit %q, host %q, os user oncall", id, c.wantPID, c.wantCommit, c.wantHost)
			}
		})
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname: %v", err)
	}
	return h
}
