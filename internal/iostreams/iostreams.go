// Package iostreams holds the input and output streams of a dynops command and
// knows whether they are terminals: progress and colour go only to a terminal,
// and `--output json` prints one JSON document on stdout and nothing else.
package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool

	mu            sync.Mutex
	bar           *Bar // the progress shown now, if any
	progressEvery *time.Duration
	now           func() time.Time
	wroteJSON     bool
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Test returns streams backed by buffers, none of them a terminal.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// SetTTY marks the streams as terminals or not (tests of interactive paths).
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

// CanPrompt reports whether a person can answer a question: stdin and stderr are terminals.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stderrTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// Progress shows a one-line status of work without a total (e.g. "reading
// alarms"): on a terminal a spinner with the text and the elapsed time,
// elsewhere a plain line every DefaultProgressEvery. Call Done to end it;
// for work with a total use StartProgress.
func (s *IOStreams) Progress(format string, args ...any) {
	s.mu.Lock()
	b := s.bar
	s.mu.Unlock()
	if b == nil {
		b = s.StartProgress("", 0)
	}
	b.Status(format, args...)
}

// Done ends the progress shown, if any.
func (s *IOStreams) Done() {
	s.mu.Lock()
	b := s.bar
	s.mu.Unlock()
	if b != nil {
		b.Done()
	}
}

// Infof prints a human message on stderr (never on stdout, which belongs to results).
func (s *IOStreams) Infof(format string, args ...any) {
	s.Done()
	fmt.Fprintf(s.ErrOut, format, args...)
}

// PrintJSON writes v as one indented JSON document on stdout.
func (s *IOStreams) PrintJSON(v any) error {
	s.mu.Lock()
	s.wroteJSON = true
	s.mu.Unlock()
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	return nil
}

// WroteJSON reports whether a JSON document was written on stdout (a failed
// command that already wrote its result adds no second document).
func (s *IOStreams) WroteJSON() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wroteJSON
}

// Table writes rows as aligned columns on stdout, the header first.
func (s *IOStreams) Table(header []string, rows [][]string) error {
	w := tabwriter.NewWriter(s.Out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing table output: %w", err)
	}
	return nil
}

// Colour wraps text in an ANSI colour on a terminal; elsewhere it returns text as is.
func (s *IOStreams) Colour(code, text string) string {
	if !s.stdoutTTY {
		return text
	}
	return "\033[" + code + "m" + text + "\033[0m"
}

// Colour codes for Colour.
const (
	Red    = "31"
	Green  = "32"
	Yellow = "33"
)
