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

	mu           sync.Mutex
	progressOpen bool
	wroteJSON    bool
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

// Progress shows a one-line status on a terminal (stderr), overwriting the
// previous one. It prints nothing when stderr is not a terminal, so logs and
// pipes stay clean; call Done to end the line.
func (s *IOStreams) Progress(format string, args ...any) {
	if !s.stderrTTY {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.ErrOut, "\r\033[K"+format, args...)
	s.progressOpen = true
}

// Done ends a progress line started by Progress.
func (s *IOStreams) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.progressOpen {
		fmt.Fprintln(s.ErrOut)
		s.progressOpen = false
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
