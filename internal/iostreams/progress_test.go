package iostreams

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

// On a terminal: one line redrawn in place, each frame clearing the line
// before it (a carriage return alone cannot redraw a line that wrapped),
// cut to the terminal's width, with a bar when the total is known; redraws
// at most every 100 ms, a new status at once; Done clears the line.
func TestProgressTerminalRedrawsInPlace(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetTTY(false, false, true)
	ios.errWidth = 60
	c := newClock()
	ios.SetClock(c.now)
	bar := ios.StartProgress("repairing dev-a-user: keys", 200)
	bar.Set(50)
	c.add(50 * time.Millisecond)
	bar.Set(60) // within 100 ms: not drawn
	c.add(100 * time.Millisecond)
	bar.Set(100)
	bar.Status("writing prod-hoge-user-restored-20261121t093512z, a name long enough to wrap")
	frames := strings.Split(errOut.String(), clearLine)
	if frames[0] != "" || len(frames) != 4 {
		t.Fatalf("want 3 frames, each after a line clear, got %q", errOut.String())
	}
	want := []string{
		"[#####               ] repairing dev-a-user: keys: 50/200 …",
		"[##########          ] repairing dev-a-user: keys: 100/200…",
	}
	for i, w := range want {
		if frames[i+1] != w {
			t.Errorf("frame %d = %q, want %q", i+1, frames[i+1], w)
		}
	}
	for _, f := range frames[1:] {
		if n := utf8.RuneCountInString(f); n > 59 || strings.ContainsAny(f, "\r\n") {
			t.Errorf("frame %q: %d columns on a 60-column terminal, or a line break", f, n)
		}
	}
	errOut.Reset()
	bar.Done()
	if errOut.String() != clearLine {
		t.Errorf("Done wrote %q, want the line cleared", errOut.String())
	}
	bar.Set(150)
	if errOut.String() != clearLine {
		t.Errorf("a finished bar drew again: %q", errOut.String())
	}
}

// On a terminal, a total that is not known (<= 0) shows the count (no bar,
// no share), and keeps being redrawn however far the count goes; a count
// past the total raises the total with it (never 150/100).
func TestProgressTerminalUnknownAndGrowingTotal(t *testing.T) {
	cases := []struct {
		name  string
		total int64
		set   []int64
		want  string // the last frame
	}{
		{"unknown total", 0, []int64{5, 31, 5000}, "lbl: 5000 done, elapsed 0s"},
		{"negative total", -1, []int64{7, 9}, "lbl: 9 done, elapsed 0s"},
		{"count below the total", 100, []int64{5, 60}, "[############        ] lbl: 60/100 (60%), elapsed 0s, ETA 0s"},
		{"count past the total", 100, []int64{5, 150}, "[####################] lbl: 150/150 (100%), elapsed 0s"},
		{"total of one, five done", 1, []int64{5}, "[####################] lbl: 5/5 (100%), elapsed 0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, errOut := Test()
			ios.SetTTY(false, false, true)
			c := newClock()
			ios.SetClock(c.now)
			bar := ios.StartProgress("lbl", tc.total)
			for _, n := range tc.set {
				bar.Set(n)
				c.add(redrawEvery)
			}
			frames := strings.Split(errOut.String(), clearLine)
			if len(frames) != len(tc.set)+1 || frames[len(frames)-1] != tc.want {
				t.Errorf("frames %q, want %d ending with %q", frames[1:], len(tc.set), tc.want)
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
