package iostreams

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTableFitsTheTerminal: on a terminal of 60 columns a 200-column table
// is cut to fit, its widest columns first, each cut cell ending in "…";
// -o wide and a non-terminal print every cell whole.
func TestTableFitsTheTerminal(t *testing.T) {
	header := []string{"RUN", "COMMAND", "RESULT"}
	rows := [][]string{
		{"r-1", "dynops dlq redrive --queue https://sqs.eu-west-1.amazonaws.com/123456789012/prod-hoge-orders-dlq --function prod-hoge-orders-projector --yes", "OK"},
		{"r-2", "dynops pitr status --table prod-hoge-user", "FAILED"},
	}
	render := func(width int, wide bool) string {
		ios, _, out, _ := Test()
		ios.SetWidth(width)
		ios.SetWide(wide)
		if err := ios.Table(header, rows); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	fitted := render(60, false)
	for _, l := range strings.Split(strings.TrimRight(fitted, "\n"), "\n") {
		if n := utf8.RuneCountInString(strings.TrimRight(l, " ")); n > 60 {
			t.Errorf("a line of %d columns on a 60-column terminal: %q", n, l)
		}
	}
	if !strings.Contains(fitted, "…") || !strings.Contains(fitted, "FAILED") || !strings.Contains(fitted, "r-2") {
		t.Errorf("the long column is cut, the short ones kept whole:\n%s", fitted)
	}
	for name, whole := range map[string]string{"-o wide": render(60, true), "not a terminal": render(0, false)} {
		if !strings.Contains(whole, rows[0][1]) {
			t.Errorf("%s: every cell whole:\n%s", name, whole)
		}
	}
	// A terminal too narrow for even the minimum keeps 8 characters a column.
	if narrow := render(10, false); !strings.Contains(narrow, "dynops …") {
		t.Errorf("columns keep their minimum:\n%s", narrow)
	}
}

// TestJSONModeKeepsStdoutForTheDocument: with -o json, a human line a
// command prints after its document goes to stderr, not into stdout after
// the JSON (migrate cutover's closing sentence once broke `runbook run`).
func TestJSONModeKeepsStdoutForTheDocument(t *testing.T) {
	ios, _, out, errOut := Test()
	ios.SetJSON()
	if err := ios.PrintJSON(map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(ios.Out, "Cut over: the pointer says multi.")
	if strings.TrimSpace(out.String()) != "{\n  \"n\": 1\n}" {
		t.Errorf("stdout holds the document only: %q", out.String())
	}
	if !strings.Contains(errOut.String(), "Cut over") {
		t.Errorf("the human line went to stderr: %q", errOut.String())
	}
}
