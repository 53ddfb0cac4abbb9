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
	"unicode/utf8"

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
	// width is the terminal's columns (0: unknown or not a terminal);
	// wide turns fitting tables to it off (-o wide).
	width int
	wide  bool
	// errWidth is stderr's columns, where progress is drawn (0: unknown).
	errWidth int

	mu            sync.Mutex
	bar           *Bar // the progress shown now, if any
	progressEvery *time.Duration
	now           func() time.Time
	wroteJSON     bool
	// jsonOut is stdout when -o json: PrintJSON writes there, and Out is
	// stderr, so that no human line can follow (or precede) the document.
	jsonOut io.Writer
	// jq filters PrintJSON's document (--jq); jqErr is its first failure.
	jq    *JQ
	jqErr error
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
		width:     terminalWidth(os.Stdout),
		errWidth:  terminalWidth(os.Stderr),
	}
}

// errColumns is the width progress lines are cut to: stderr's, else 80.
func (s *IOStreams) errColumns() int {
	if s.errWidth > 0 {
		return s.errWidth
	}
	return 80
}

// terminalWidth is f's columns when it is a terminal, else 0.
func terminalWidth(f *os.File) int {
	if !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// SetWidth sets the terminal's columns tables fit on stdout (0: no limit;
// tests of the fitting).
func (s *IOStreams) SetWidth(columns int) { s.width = columns }

// SetWide turns fitting tables to the terminal off (-o wide).
func (s *IOStreams) SetWide(wide bool) { s.wide = wide }

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

// Notef prints a human message on stderr without ending the progress shown:
// a note in the middle of long work (e.g. the first throttle of a reason).
// On a terminal the bar's line is cleared first and the bar redraws below.
func (s *IOStreams) Notef(format string, args ...any) {
	s.mu.Lock()
	tty := s.bar != nil && s.bar.term
	s.mu.Unlock()
	if tty {
		fmt.Fprint(s.ErrOut, "\r\033[K")
	}
	fmt.Fprintf(s.ErrOut, format, args...)
}

// SetJSON makes stdout hold the JSON document only (-o json): from now on
// Out is stderr, and PrintJSON writes to stdout. A command's human lines
// (a closing sentence, a table) then go to stderr, whatever path prints
// them.
func (s *IOStreams) SetJSON() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jsonOut == nil {
		s.jsonOut, s.Out = s.Out, s.ErrOut
	}
}

// PrintJSON writes v as one indented JSON document on stdout, or, with
// SetJQ, what the jq expression makes of it.
func (s *IOStreams) PrintJSON(v any) error {
	out, jq := s.jsonWriter()
	if jq != nil {
		if err := jq.Print(out, v); err != nil {
			s.mu.Lock()
			if s.jqErr == nil {
				s.jqErr = err
			}
			s.mu.Unlock()
			return err
		}
		return nil
	}
	return writeJSON(out, v)
}

// PrintJSONUnfiltered writes v as PrintJSON does without --jq: the error
// document of a failed command, which an expression written for the result
// would only hide.
func (s *IOStreams) PrintJSONUnfiltered(v any) error {
	out, _ := s.jsonWriter()
	return writeJSON(out, v)
}

// jsonWriter marks the JSON document written and returns where it goes.
func (s *IOStreams) jsonWriter() (io.Writer, *JQ) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wroteJSON = true
	if s.jsonOut != nil {
		return s.jsonOut, s.jq
	}
	return s.Out, s.jq
}

// SetJQ filters every PrintJSON document through jq (--jq).
func (s *IOStreams) SetJQ(jq *JQ) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jq = jq
}

// JQErr is the first failure of the --jq expression on a document (nil
// when it did not fail or there is none): the output is incomplete.
func (s *IOStreams) JQErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jqErr
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
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
//
// On a terminal the table fits its width: the widest columns are cut,
// each cut cell ending in "…", down to 8 characters a column; -o wide
// prints every cell whole, -o json everything.
func (s *IOStreams) Table(header []string, rows [][]string) error {
	if s.width > 0 && !s.wide {
		header, rows = fit(s.width, header, rows)
	}
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

// fit cuts the widest columns until the table (2 spaces between columns)
// fits width, keeping at least minColumn characters a column.
func fit(width int, header []string, rows [][]string) ([]string, [][]string) {
	const minColumn = 8
	n := len(header)
	widths := make([]int, n)
	measure := func(r []string) {
		for i := 0; i < n && i < len(r); i++ {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	total := func() int {
		t := 2 * (n - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	limit := append([]int(nil), widths...)
	for total() > width {
		widest := 0
		for i := range widths {
			if widths[i] > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minColumn {
			break
		}
		widths[widest]--
		limit[widest] = widths[widest]
	}
	cut := func(r []string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			if i < n && utf8.RuneCountInString(c) > limit[i] {
				c = string([]rune(c)[:limit[i]-1]) + "…"
			}
			out[i] = c
		}
		return out
	}
	fitted := make([][]string, len(rows))
	for i, r := range rows {
		fitted[i] = cut(r)
	}
	return cut(header), fitted
}
