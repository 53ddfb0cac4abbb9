package iostreams

import (
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)} }
func lines(s string) []string        { return strings.Split(strings.TrimSpace(s), "\n") }
func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// Not on a terminal (CI logs, tee): a plain line every 5 s with the total,
// the share done, the elapsed time and an ETA; nothing more often.
func TestProgressPlainLinesEveryFiveSeconds(t *testing.T) {
	ios, _, _, errOut := Test()
	c := newClock()
	ios.SetClock(c.now)
	bar := ios.StartProgress("table diff: items scanned", 1000)
	for i := 1; i <= 20; i++ {
		c.add(time.Second)
		bar.Set(int64(i * 50))
	}
	bar.Done()
	got := lines(errOut.String())
	if len(got) != 4 {
		t.Fatalf("want a line every 5 s over 20 s (4 lines), got %d:\n%s", len(got), errOut)
	}
	if !contains(got[0], "table diff: items scanned: 250/1000 (25%), elapsed 5s, ETA 15s") {
		t.Errorf("first line %q", got[0])
	}
	if !contains(got[3], "1000/1000 (100%), elapsed 20s") || strings.Contains(got[3], "ETA") {
		t.Errorf("last line %q", got[3])
	}
	bar.Set(5) // after Done: nothing
	if len(lines(errOut.String())) != 4 {
		t.Error("a finished bar wrote again")
	}
}

func TestProgressUnknownTotalAndStatus(t *testing.T) {
	ios, _, _, errOut := Test()
	c := newClock()
	ios.SetClock(c.now)
	ios.SetProgressEvery(0)
	bar := ios.StartProgress("export 0170-abcd", 0)
	c.add(90 * time.Second)
	bar.Status("IN_PROGRESS after %s", 90*time.Second)
	bar.Done()
	ios.Progress("reading %s", "alarms")
	ios.Done()
	got := lines(errOut.String())
	if len(got) != 2 || got[0] != "export 0170-abcd: elapsed 1m30s; IN_PROGRESS after 1m30s" || got[1] != "progress: elapsed 0s; reading alarms" {
		t.Errorf("lines %q", got)
	}
}

// On a terminal: the progress library draws a bar with the count and ETA,
// and Done clears it.
func TestProgressTerminalBar(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetTTY(false, false, true)
	bar := ios.StartProgress("repairing dev-a-user: keys", 200)
	bar.Set(50)
	time.Sleep(150 * time.Millisecond) // past the library's redraw throttle
	bar.Set(100)
	out := errOut.String()
	if !contains(out, "repairing dev-a-user: keys", "/200") {
		t.Errorf("terminal bar %q lacks the label and total", out)
	}
	bar.Done()
	ios.Progress("status %d", 1)
	ios.Done()
}
