package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// chainedLog writes three runs (six chained records) through the recorder.
func chainedLog(t *testing.T) (path string, lines [][]byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "audit.jsonl")
	for i := 0; i < 3; i++ {
		r := newTestRecorder(t, path)
		if err := r.Start(context.Background(), Plan{}); err != nil {
			t.Fatal(err)
		}
		if err := r.Finish(context.Background(), Outcome{}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, bytes.SplitAfter(data, []byte("\n"))[:6]
}

func writeLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestChainHoldsAndNamesTheFirstBrokenLine (issue 44): every record carries
// the SHA-256 of the line before it; an edited, a deleted and an inserted
// line are each found, at the line after the change, and a record without
// prev after chained ones too. Records written before the chain (no prev)
// are counted, not refused.
func TestChainHoldsAndNamesTheFirstBrokenLine(t *testing.T) {
	path, lines := chainedLog(t)
	rep, err := VerifyChain(path)
	if err != nil || !rep.OK() || rep.Chained != 6 || rep.Lines != 6 {
		t.Fatalf("intact log: %+v, %v", rep, err)
	}
	if !strings.Contains(string(lines[0]), `"prev":""`) || !strings.Contains(string(lines[1]), `"prev":"`+LineHash(lines[0])+`"`) {
		t.Fatalf("records do not chain:\n%s%s", lines[0], lines[1])
	}
	forged := bytes.Replace(lines[1], []byte(`"result":"ok"`), []byte(`"result":"dry-run"`), 1)
	if bytes.Equal(forged, lines[1]) {
		t.Fatalf("no result to edit in %s", lines[1])
	}
	// a copy of a record, re-chained to the line before it (a careful forger)
	inserted := bytes.Replace(lines[2], []byte(`"prev":"`+LineHash(lines[1])+`"`), []byte(`"prev":"`+LineHash(lines[2])+`"`), 1)
	legacy := []byte(`{"time":"2026-01-01T00:00:00Z","event":"started","run_id":"old"}` + "\n")
	for _, c := range []struct {
		name   string
		lines  [][]byte
		broken int
		reason string
	}{
		{"edited", [][]byte{lines[0], forged, lines[2], lines[3], lines[4], lines[5]}, 3, "line 2 was edited"},
		{"deleted", [][]byte{lines[0], lines[1], lines[3], lines[4], lines[5]}, 3, "line 2 was edited, or a line was deleted or inserted"},
		{"deleted first", [][]byte{lines[1], lines[2], lines[3], lines[4], lines[5]}, 1, "the lines before it were deleted"},
		{"inserted, re-chained", [][]byte{lines[0], lines[1], lines[2], inserted, lines[3], lines[4], lines[5]}, 5, "line 4 was edited, or a line was deleted or inserted"},
		{"inserted without prev", [][]byte{lines[0], lines[1], legacy, lines[2], lines[3], lines[4], lines[5]}, 3, "carries no prev after chained records"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeLines(t, path, c.lines)
			rep, err := VerifyChain(path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Broken != c.broken || !strings.Contains(rep.Reason, c.reason) {
				t.Fatalf("got broken line %d (%s), want line %d (%s)", rep.Broken, rep.Reason, c.broken, c.reason)
			}
		})
	}
	t.Run("records before the chain", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "audit.jsonl")
		writeLines(t, p, [][]byte{legacy, legacy})
		r := newTestRecorder(t, p)
		if err := r.Finish(context.Background(), Outcome{}); err != nil {
			t.Fatal(err)
		}
		rep, err := VerifyChain(p)
		if err != nil || !rep.OK() || rep.Unchained != 2 || rep.Chained != 2 {
			t.Fatalf("%+v, %v", rep, err)
		}
	})
}

// TestConcurrentRunsChainInOrder: runs appending at once each chain to the
// line actually before theirs (the last line is read under the lock).
func TestConcurrentRunsChainInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newTestRecorder(t, path)
			r.Act("big", "t", map[string]string{"pad": strings.Repeat("x", 16<<10)})
			if err := r.Start(context.Background(), Plan{}); err != nil {
				t.Error(err)
			}
			if err := r.Finish(context.Background(), Outcome{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	rep, err := VerifyChain(path)
	if err != nil || !rep.OK() || rep.Chained != 20 {
		t.Fatalf("%+v, %v", rep, err)
	}
}
