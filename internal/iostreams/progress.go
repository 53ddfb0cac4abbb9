package iostreams

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultProgressEvery is how often a plain progress line is written when
// stderr is not a terminal (CI logs, tee).
const DefaultProgressEvery = 5 * time.Second

// Bar is the progress of one piece of long work: on a terminal one line
// redrawn in place (a bar when the total is known, the count, the elapsed
// time and an ETA), elsewhere a plain line every DefaultProgressEvery.
// Start one with StartProgress.
//
// The terminal line is cleared and written again on each redraw, cut to the
// terminal's width: a line that wraps cannot be redrawn with a carriage
// return (its first rows would stay on screen at their first frame). Done
// clears it, so the next output starts on a clean line.
type Bar struct {
	s     *IOStreams
	label string

	mu       sync.Mutex
	total    int64 // <= 0: unknown
	done     int64
	status   string
	start    time.Time
	lastLine time.Time
	term     bool // stderr is a terminal: redraw in place
	drawn    bool // a terminal line is on screen
	lastDraw time.Time
	finished bool
}

// redrawEvery bounds terminal redraws (a count updated per item would
// otherwise repaint thousands of times a second).
const redrawEvery = 100 * time.Millisecond

// StartProgress starts the progress of label with total units of work
// (items, messages, keys; <= 0 when unknown: the count and the elapsed
// time). Call Set as work gets done and Done at the end.
func (s *IOStreams) StartProgress(label string, total int64) *Bar {
	s.Done() // one progress display at a time
	now := s.clock()
	b := &Bar{s: s, label: label, total: total, start: now, lastLine: now, term: s.stderrTTY}
	s.mu.Lock()
	s.bar = b
	s.mu.Unlock()
	return b
}

// SetTotal changes the total (e.g. once it is known).
func (b *Bar) SetTotal(total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
}

// Set records that n units are done; a count past the total raises the
// total with it (never 150/100).
func (b *Bar) Set(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.done = n
	if b.total > 0 && n > b.total {
		b.total = n
	}
	b.show(false)
}

// Status sets a short status shown with the count (e.g. "IN_PROGRESS").
func (b *Bar) Status(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.status = fmt.Sprintf(format, args...)
	b.show(true)
}

// Done ends the progress display (on a terminal: clears its line).
func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	if b.drawn {
		fmt.Fprint(b.s.ErrOut, clearLine)
	}
	b.s.mu.Lock()
	if b.s.bar == b {
		b.s.bar = nil
	}
	b.s.mu.Unlock()
}

// clearLine returns to the start of the line and erases it (ANSI EL2).
const clearLine = "\r\033[2K"

// show draws on a terminal (at most every redrawEvery unless forced: a new
// status is always shown) or writes a plain line when its interval passed.
func (b *Bar) show(force bool) {
	if !b.term {
		b.maybeLine()
		return
	}
	now := b.s.clock()
	if !force && b.drawn && now.Sub(b.lastDraw) < redrawEvery {
		return
	}
	b.lastDraw, b.drawn = now, true
	fmt.Fprint(b.s.ErrOut, clearLine+fitWidth(b.termLine(now), b.s.errColumns()-1))
}

// termLine is the terminal's line: a bar when the total is known, then
// the plain line, e.g. "[#####               ] table diff: 1200/5000 (24%), elapsed 10s, ETA 32s".
func (b *Bar) termLine(now time.Time) string {
	if b.total <= 0 {
		return b.line(now)
	}
	const width = 20
	filled := int(b.done * width / b.total)
	return "[" + strings.Repeat("#", filled) + strings.Repeat(" ", width-filled) + "] " + b.line(now)
}

// fitWidth cuts s to columns characters, the last one "…".
func fitWidth(s string, columns int) string {
	if columns < 1 || utf8.RuneCountInString(s) <= columns {
		return s
	}
	r := []rune(s)
	return string(r[:columns-1]) + "…"
}

// maybeLine writes a plain progress line when the interval has passed.
func (b *Bar) maybeLine() {
	now := b.s.clock()
	if now.Sub(b.lastLine) < b.s.every() {
		return
	}
	b.lastLine = now
	fmt.Fprintln(b.s.ErrOut, b.line(now))
}

// line is the plain progress line, e.g.
// "table diff: 1200/5000 (24%), elapsed 10s, ETA 32s; scanning".
func (b *Bar) line(now time.Time) string {
	elapsed := now.Sub(b.start).Round(time.Second)
	label := b.label
	if label == "" {
		label = "progress"
	}
	var s string
	switch {
	case b.total > 0:
		s = fmt.Sprintf("%s: %d/%d (%d%%), elapsed %s", label, b.done, b.total, b.done*100/b.total, elapsed)
		if b.done > 0 && b.done < b.total {
			eta := time.Duration(float64(now.Sub(b.start)) * float64(b.total-b.done) / float64(b.done))
			s += ", ETA " + eta.Round(time.Second).String()
		}
	case b.done > 0:
		s = fmt.Sprintf("%s: %d done, elapsed %s", label, b.done, elapsed)
	default:
		s = fmt.Sprintf("%s: elapsed %s", label, elapsed)
	}
	if b.status != "" {
		s += "; " + b.status
	}
	return s
}

// SetProgressEvery sets how often a plain progress line is written when
// stderr is not a terminal (tests; 0 writes one per update).
func (s *IOStreams) SetProgressEvery(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progressEvery = &d
}

// SetClock replaces the clock of progress lines (tests).
func (s *IOStreams) SetClock(now func() time.Time) { s.now = now }

func (s *IOStreams) every() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.progressEvery != nil {
		return *s.progressEvery
	}
	return DefaultProgressEvery
}

func (s *IOStreams) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}
