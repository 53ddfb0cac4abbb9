package iostreams

import (
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// DefaultProgressEvery is how often a plain progress line is written when
// stderr is not a terminal (CI logs, tee).
const DefaultProgressEvery = 5 * time.Second

// Bar is the progress of one piece of long work: on a terminal a bar with
// the total and an ETA (github.com/schollz/progressbar), elsewhere a plain
// line every DefaultProgressEvery. Start one with StartProgress.
type Bar struct {
	s     *IOStreams
	label string

	mu       sync.Mutex
	total    int64 // <= 0: unknown
	done     int64
	status   string
	start    time.Time
	lastLine time.Time
	tty      *progressbar.ProgressBar
	finished bool
}

// StartProgress starts the progress of label with total units of work
// (items, messages, keys; <= 0 when unknown: a spinner with the count and
// the elapsed time). Call Set as work gets done and Done at the end.
func (s *IOStreams) StartProgress(label string, total int64) *Bar {
	s.Done() // one progress display at a time
	now := s.clock()
	b := &Bar{s: s, label: label, total: total, start: now, lastLine: now}
	if s.stderrTTY {
		max := total
		if max <= 0 {
			max = -1 // progressbar's spinner
		}
		b.tty = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(s.ErrOut),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionUseANSICodes(true),
		)
	}
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
	if b.tty != nil && total > 0 {
		b.tty.ChangeMax64(total)
	}
}

// Set records that n units are done.
func (b *Bar) Set(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.done = n
	if b.tty != nil {
		if b.total > 0 && n > b.total {
			b.total = n
			b.tty.ChangeMax64(n)
		}
		_ = b.tty.Set64(n)
		return
	}
	b.maybeLine()
}

// Status sets a short status shown with the count (e.g. "IN_PROGRESS").
func (b *Bar) Status(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.status = fmt.Sprintf(format, args...)
	if b.tty != nil {
		desc := b.status
		if b.label != "" {
			desc = b.label + ": " + desc
		}
		b.tty.Describe(desc)
		_ = b.tty.Set64(b.done) // redraw
		return
	}
	b.maybeLine()
}

// Done ends the progress display.
func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	if b.tty != nil {
		_ = b.tty.Exit()
	}
	b.s.mu.Lock()
	if b.s.bar == b {
		b.s.bar = nil
	}
	b.s.mu.Unlock()
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
