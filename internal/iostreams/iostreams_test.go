package iostreams

import (
	"errors"
	"strings"
	"testing"
)

func TestCanPromptNeedsStdinAndStderrTerminals(t *testing.T) {
	for _, c := range []struct {
		stdin, stdout, stderr, want bool
	}{
		{true, true, true, true},
		{true, false, true, true}, // stdout piped (-o json | jq): a person still answers on stderr
		{false, true, true, false},
		{true, true, false, false},
		{false, false, false, false},
	} {
		ios, _, _, _ := Test()
		ios.SetTTY(c.stdin, c.stdout, c.stderr)
		if got := ios.CanPrompt(); got != c.want {
			t.Errorf("CanPrompt with stdin %v, stdout %v, stderr %v = %v, want %v", c.stdin, c.stdout, c.stderr, got, c.want)
		}
		if got := ios.IsStdoutTTY(); got != c.stdout {
			t.Errorf("IsStdoutTTY = %v, want %v", got, c.stdout)
		}
	}
}

func TestColourOnlyOnATerminal(t *testing.T) {
	ios, _, _, _ := Test()
	if got := ios.Colour(Red, "FAIL"); got != "FAIL" {
		t.Errorf("not a terminal: Colour = %q, want the text as is", got)
	}
	ios.SetTTY(false, true, false)
	if got := ios.Colour(Green, "pass"); got != "\033[32mpass\033[0m" {
		t.Errorf("terminal: Colour = %q", got)
	}
}

func TestPrintJSONIsOneIndentedDocumentOnStdout(t *testing.T) {
	ios, _, out, errOut := Test()
	if ios.WroteJSON() {
		t.Fatal("WroteJSON before any JSON")
	}
	if err := ios.PrintJSON(map[string]any{"table": "dev-a-user", "items": 3}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"items\": 3,\n  \"table\": \"dev-a-user\"\n}\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr %q, want nothing", errOut)
	}
	if !ios.WroteJSON() {
		t.Error("WroteJSON is false after PrintJSON")
	}
	err := ios.PrintJSON(func() {})
	if err == nil || !strings.Contains(err.Error(), "writing JSON output") {
		t.Errorf("PrintJSON of a func: error %v, want one naming the JSON output", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTableAlignsColumns(t *testing.T) {
	ios, _, out, _ := Test()
	if err := ios.Table([]string{"TABLE", "STATUS"}, [][]string{{"dev-a-user", "ok"}, {"prod-b", "FAIL"}}); err != nil {
		t.Fatal(err)
	}
	want := "TABLE       STATUS\ndev-a-user  ok\nprod-b      FAIL\n"
	if out.String() != want {
		t.Errorf("table %q, want %q", out, want)
	}
	ios.Out = failingWriter{}
	if err := ios.Table([]string{"A"}, nil); err == nil || !strings.Contains(err.Error(), "writing table output: disk full") {
		t.Errorf("Table on a failing stdout: error %v", err)
	}
}

func TestInfofEndsTheProgressAndWritesStderr(t *testing.T) {
	ios, _, out, errOut := Test()
	ios.SetProgressEvery(0)
	ios.Progress("reading %s", "alarms")
	first := ios.bar
	ios.Infof("read %d alarms\n", 4)
	if ios.bar != nil || !first.finished {
		t.Error("Infof left the progress display running")
	}
	ios.Progress("again") // a new display: the first one ended
	got := lines(errOut.String())
	want := []string{"progress: elapsed 0s; reading alarms", "read 4 alarms", "progress: elapsed 0s; again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stderr lines %q, want %q", got, want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q: messages belong on stderr", out)
	}
}

// TestNotefKeepsTheProgress: a note in the middle of long work (a throttle's
// reason) leaves the progress running, unlike Infof.
func TestNotefKeepsTheProgress(t *testing.T) {
	ios, _, out, errOut := Test()
	ios.SetProgressEvery(0)
	bar := ios.StartProgress("backfill", 10)
	ios.Notef("throttled (%s, retrying)\n", "TableWriteKeyRangeThroughputExceeded")
	if ios.bar != bar || bar.finished {
		t.Fatal("Notef ended the progress display")
	}
	bar.Set(5)
	got := strings.Join(lines(errOut.String()), "|")
	if !strings.Contains(got, "throttled (TableWriteKeyRangeThroughputExceeded, retrying)|backfill: 5/10") {
		t.Errorf("stderr %q: the note, then the progress going on", got)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q: notes belong on stderr", out)
	}
}
