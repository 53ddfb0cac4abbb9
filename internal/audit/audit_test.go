package audit

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestRecorderAppendsOneLinePerRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "audit.jsonl")
	clock := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	for i := 0; i < 2; i++ {
		r := NewRecorder(path, func() time.Time { return clock })
		var wg sync.WaitGroup
		for j := 0; j < 10; j++ {
			wg.Add(1)
			go func() { defer wg.Done(); r.Act("restore", "prod-hoge-user", map[string]int{"n": j}) }()
		}
		wg.Wait()
		if err := r.Write(Record{Command: "dynops pitr restore", Params: map[string]string{"table": "prod-hoge-user"}, Result: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, rec := range recs {
		if rec.Command != "dynops pitr restore" || rec.Params["table"] != "prod-hoge-user" || !rec.Time.Equal(clock) || rec.User == "" {
			t.Errorf("record %+v", rec)
		}
		if len(rec.Actions) != 10 {
			t.Errorf("%d actions, want 10", len(rec.Actions))
		}
	}
}

func TestDefaultPathFollowsXDG(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	p, err := DefaultPath()
	if err != nil || p != "/var/state/dynops/audit.jsonl" {
		t.Fatalf("DefaultPath = %q, %v", p, err)
	}
}
