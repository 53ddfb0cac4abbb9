package iostreams

import (
	"fmt"
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

// On a terminal, a total that is not known (<= 0) is a spinner with the
// count, not a bar; a count past the total raises the total with it (the
// bar neither shows 150/100 nor ends early). The library's own maximum
// is read back, since its redraws are throttled.
func TestProgressTerminalSpinnerAndGrowingTotal(t *testing.T) {
	cases := []struct {
		name         string
		total        int64
		set          []int64
		wantMax      int64
		wantFinished bool
	}{
		{"unknown total", 0, []int64{5}, -1, false},
		{"negative total", -1, []int64{7, 9}, -1, false},
		{"count below the total", 100, []int64{5, 60}, 100, false},
		{"count past the total", 100, []int64{5, 150}, 150, true},
		{"count at the total", 100, []int64{5, 100}, 100, true},
		{"total of one, five done", 1, []int64{5}, 5, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, errOut := Test()
			ios.SetTTY(false, false, true)
			bar := ios.StartProgress("lbl", tc.total)
			for _, n := range tc.set {
				bar.Set(n)
			}
			if got := bar.tty.GetMax64(); tc.wantMax > 0 && got != tc.wantMax {
				t.Errorf("bar maximum = %d, want %d", got, tc.wantMax)
			}
			if got := bar.tty.IsFinished(); got != tc.wantFinished {
				t.Errorf("bar finished = %v, want %v", got, tc.wantFinished)
			}
			if out := errOut.String(); tc.wantMax < 0 && (!strings.Contains(out, fmt.Sprintf("lbl (%d/-)", tc.set[0])) || strings.Contains(out, "%")) {
				t.Errorf("output %q is not a spinner with the count", out)
			}
			bar.Done()
		})
	}
}

// The plain line: no ETA before anything is done (no rate to estimate from)
// nor once everything is; the share done is of the total.
func TestProgressPlainLine(t *testing.T) {
	cases := []struct {
		label       string
		total, done int64
		status      string
		want        string
	}{
		{"scan", 100, 0, "", "scan: 0/100 (0%), elapsed 10s"},
		{"scan", 100, 25, "", "scan: 25/100 (25%), elapsed 10s, ETA 30s"},
		{"scan", 100, 99, "", "scan: 99/100 (99%), elapsed 10s, ETA 0s"},
		{"scan", 100, 100, "", "scan: 100/100 (100%), elapsed 10s"},
		{"scan", 0, 7, "", "scan: 7 done, elapsed 10s"},
		{"scan", -1, 0, "waiting", "scan: elapsed 10s; waiting"},
		{"", 4, 1, "ACTIVE", "progress: 1/4 (25%), elapsed 10s, ETA 30s; ACTIVE"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			ios, _, _, _ := Test()
			c := newClock()
			b := &Bar{s: ios, label: tc.label, total: tc.total, done: tc.done, status: tc.status, start: c.now()}
			c.add(10 * time.Second)
			if got := b.line(c.now()); got != tc.want {
				t.Errorf("line = %q, want %q", got, tc.want)
			}
		})
	}
}
