package repodocs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/clidoc"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// Illustrative is the marker of documented command lines that are not meant
// to be run as written, so not checked (docs/testing.md, "Docs that
// execute"): on its own line before a fenced block or a paragraph it covers
// the whole block or paragraph; at the end of a line in a fenced block
// (as a shell comment, `# illustrative`) it covers that line.
const Illustrative = "<!-- illustrative -->"

// illustrativeComment is the in-block form of the marker.
const illustrativeComment = "# illustrative"

// DocLine is one documented dynops command line.
type DocLine struct {
	File string
	Line int    // where it starts
	Text string // from "dynops" (or "bin/dynops") to the end of the command
}

func (d DocLine) String() string { return fmt.Sprintf("%s:%d: `%s`", d.File, d.Line, d.Text) }

// commandStart finds a dynops command where a shell line starts one: at
// the start (after env assignments, `time` or `env`), or after `&&`, `||`,
// `;`, `|` or `$(`. Mid-sentence words ("the dynops blocks") and program
// output ("so dynops cannot show ...") are not commands.
var commandStart = regexp.MustCompile(`(?:^|&&|\|\||;|\||\$\()\s*(?:(?:time|env|nice)\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*((?:\./)?bin/dynops|dynops)\s+[a-z-]`)

// fencedBlock is a code fence; its info string decides whether its lines are
// shell (checked) or something else: the runbooks' own ```dynops blocks are
// checked by TestRunbookStepsMatchTheCommandTree (internal/cmd/root).
var shellInfo = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true, "text": true}

// ExtractCommandLines returns the dynops command lines of one markdown file:
// in shell code blocks (continuation lines joined) and in inline code spans
// of prose and tables (spans may wrap across lines of a paragraph). Lines
// under the Illustrative marker are left out.
func ExtractCommandLines(file, md string) []DocLine {
	var out []DocLine
	lines := strings.Split(md, "\n")
	marked := false // an Illustrative line was seen: the next block or paragraph is left out
	var para []string
	paraStart := 0
	flush := func() {
		if len(para) > 0 && !marked {
			out = append(out, inlineSpans(file, paraStart, para)...)
		}
		if len(para) > 0 {
			marked = false
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if trimmed == Illustrative {
			flush()
			marked = true
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			flush()
			info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			skipBlock := marked || !shellInfo[info]
			marked = false
			j := i + 1
			for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```"); j++ {
				if skipBlock {
					continue
				}
				start := j
				text := lines[j]
				for strings.HasSuffix(strings.TrimSpace(text), `\`) && j+1 < len(lines) {
					j++
					text = strings.TrimSuffix(strings.TrimSpace(text), `\`) + " " + strings.TrimSpace(lines[j])
				}
				out = append(out, shellCommands(file, start+1, text)...)
			}
			i = j
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") && !strings.HasPrefix(trimmed, "#!") {
			flush()
			if trimmed != "" {
				out = append(out, inlineSpans(file, i, []string{lines[i]})...) // a heading's spans
			}
			continue
		}
		if len(para) == 0 {
			paraStart = i
		}
		para = append(para, lines[i])
	}
	flush()
	return out
}

// shellCommands are the dynops commands of one shell line (after its
// continuations were joined), unless it ends with the in-block marker.
func shellCommands(file string, line int, text string) []DocLine {
	if strings.HasSuffix(strings.TrimSpace(text), illustrativeComment) {
		return nil
	}
	text = stripComment(strings.TrimPrefix(strings.TrimSpace(text), "$ "))
	var out []DocLine
	for _, m := range commandStart.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, DocLine{File: file, Line: line, Text: cutCommand(text[m[2]:])})
	}
	return out
}

// inlineSpans are the `dynops ...` code spans of a paragraph (first line
// index first, 0-based).
func inlineSpans(file string, first int, para []string) []DocLine {
	joined := strings.Join(para, "\n")
	var out []DocLine
	for pos := 0; ; {
		open := strings.IndexByte(joined[pos:], '`')
		if open < 0 {
			break
		}
		open += pos
		end := strings.IndexByte(joined[open+1:], '`')
		if end < 0 {
			break
		}
		end += open + 1
		span := strings.Join(strings.Fields(joined[open+1:end]), " ")
		pos = end + 1
		if m := commandStart.FindStringSubmatchIndex(span); m != nil && m[0] == 0 {
			line := first + 1 + strings.Count(joined[:open], "\n")
			out = append(out, DocLine{File: file, Line: line, Text: cutCommand(span[m[2]:])})
		}
	}
	return out
}

// stripComment removes a shell comment (a # after a blank, outside quotes).
func stripComment(s string) string {
	return cutOutsideQuotes(s, func(i int, r rune) bool { return r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') })
}

// cutCommand ends a command where the shell would: a pipe, a redirect, a
// `;` or `&&`, the end of a `$( ... )`.
func cutCommand(s string) string {
	return cutOutsideQuotes(s, func(_ int, r rune) bool { return strings.ContainsRune("|;><)&", r) })
}

// cutOutsideQuotes returns s up to the first rune outside quotes that stop
// accepts, with its blanks normalized.
func cutOutsideQuotes(s string, stop func(i int, r rune) bool) string {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case stop(i, r):
			return strings.Join(strings.Fields(s[:i]), " ")
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// placeholder reports whether a documented value stands for one the reader
// gives: NAME, <name>, $T, {table}, "...", a word with an ellipsis.
var placeholder = regexp.MustCompile(`^([A-Z][A-Z0-9_]*|<[^>]*>|.*\$.*|.*\{.*\}.*|.*\.\.\..*|.*….*|[A-Z][A-Z0-9_]*=.*)$`)

// CheckCommandLine checks one documented command line against the command
// tree (every subcommand and flag exists, flag values parse unless they are
// placeholders) and, for `runbook run|show NAME`, against the runbook: the
// runbook exists, every --param NAME is declared, every step named by
// --until, --through, --restart-from and --decide exists.
func CheckCommandLine(root *cobra.Command, text string) error {
	args, err := runbook.Split(strings.NewReplacer("[", " ", "]", " ").Replace(text))
	if err != nil {
		return err
	}
	args = args[1:]
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if cmd.HasAvailableSubCommands() {
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") && !placeholder.MatchString(a) {
				return fmt.Errorf("`%s` has no subcommand %q (it has: %s)", cmd.CommandPath(), a, strings.Join(subcommands(cmd), ", "))
			}
		}
	}
	resetFlags(cmd)
	if err := cmd.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) && !namedInProse(err, rest) {
		if m := invalidValue.FindStringSubmatch(err.Error()); m == nil || !placeholder.MatchString(m[1]) {
			return fmt.Errorf("`%s`: %v", cmd.CommandPath(), err)
		}
	}
	switch cmd.CommandPath() {
	case "dynops runbook run", "dynops runbook show":
		return checkRunbookArgs(cmd)
	}
	return nil
}

// namedInProse: a line that ends with a flag that takes a value names the
// flag (`dynops check --env` in a sentence), it does not misuse it.
func namedInProse(err error, args []string) bool {
	return strings.HasPrefix(err.Error(), "flag needs an argument") && len(args) > 0 && strings.HasPrefix(args[len(args)-1], "-")
}

var invalidValue = regexp.MustCompile(`invalid argument "([^"]*)"`)

func subcommands(cmd *cobra.Command) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			out = append(out, c.Name())
		}
	}
	return out
}

// resetFlags gives each flag its default again (repeatable flags collect
// values across parses of one tree).
func resetFlags(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if sv, ok := f.Value.(interface{ Replace([]string) error }); ok {
			_ = sv.Replace(nil)
			return
		}
		_ = f.Value.Set(f.DefValue)
		f.Changed = false
	})
}

func checkRunbookArgs(cmd *cobra.Command) error {
	pos := cmd.Flags().Args()
	if len(pos) == 0 || placeholder.MatchString(pos[0]) {
		return nil
	}
	rb, err := runbook.Find(runbooks.FS, pos[0])
	if err != nil {
		return err
	}
	if cmd.Name() == "show" {
		return nil
	}
	var problems []string
	declared := map[string]bool{}
	var names []string
	for _, p := range rb.Params {
		declared[p.Name] = true
		names = append(names, p.Name)
	}
	params, _ := cmd.Flags().GetStringArray("param")
	for _, p := range params {
		name, _, _ := strings.Cut(p, "=")
		if !declared[name] && !placeholder.MatchString(name) {
			problems = append(problems, fmt.Sprintf("--param %s: runbook %s has no such parameter (it takes: %s)", name, rb.Name, strings.Join(names, ", ")))
		}
	}
	for _, flag := range []string{"until", "through", "restart-from"} {
		if cmd.Flags().Lookup(flag) == nil {
			problems = append(problems, fmt.Sprintf("--%s: `dynops runbook run` has no such flag", flag))
			continue
		}
		step, _ := cmd.Flags().GetString(flag)
		if step != "" && !rb.HasStep(step) && !placeholder.MatchString(step) {
			problems = append(problems, fmt.Sprintf("--%s %s: runbook %s has no such step (steps: %s)", flag, step, rb.Name, strings.Join(rb.StepIDs(), ", ")))
		}
	}
	decide, _ := cmd.Flags().GetStringSlice("decide")
	for _, d := range decide {
		step, choice, _ := strings.Cut(d, "=")
		if placeholder.MatchString(step) {
			continue
		}
		var st *runbook.Step
		for i := range rb.Steps {
			if rb.Steps[i].ID == step {
				st = &rb.Steps[i]
			}
		}
		switch {
		case st == nil || !st.IsDecision():
			problems = append(problems, fmt.Sprintf("--decide %s: runbook %s has no such decision", d, rb.Name))
		case !slices.Contains(st.Choices, choice) && !placeholder.MatchString(choice):
			problems = append(problems, fmt.Sprintf("--decide %s: the choices are %s", d, strings.Join(st.Choices, ", ")))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// docFiles are the files whose command lines are checked: README.md,
// docs/*.md (the generated docs/cli/ reference is rendered from the tree)
// and runbooks/*.md.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, glob := range []string{"docs/*.md", "runbooks/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	sort.Strings(files[1:])
	return files
}

// TestDocumentedCommandLinesExist: every dynops command line of README.md,
// docs/*.md and runbooks/*.md names commands, flags, runbooks, parameters
// and steps that exist, unless marked illustrative.
func TestDocumentedCommandLinesExist(t *testing.T) {
	root := repoRoot(t)
	total := 0
	for _, file := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ExtractCommandLines(file, string(b)) {
			total++
			if err := CheckCommandLine(clidoc.Tree(), d.Text); err != nil {
				t.Errorf("%s: %v\nfix: correct the line, or mark it illustrative (%s before its block or paragraph, or %q at the end of the line in a code block)", d, err, Illustrative, illustrativeComment)
			}
		}
	}
	if total < 100 {
		t.Errorf("%d documented command lines found: the extraction lost most of them", total)
	}
	t.Logf("%d documented dynops command lines checked", total)
}

// TestDocumentedCommandLineCheckFails: the check fails on the line
// docs/sandbox.md had (a --param the runbook does not take), an unknown
// flag, subcommand, runbook, step and decision, and a bad flag value; it
// finds command lines in code blocks (continuations joined) and code spans
// that wrap, and leaves out the lines marked illustrative.
func TestDocumentedCommandLineCheckFails(t *testing.T) {
	cases := []struct {
		line string
		want string // "" = passes
	}{
		{"bin/dynops runbook run pitr-restore --incident INC-PRACTICE-1 --param table=... --param time=... --yes --until restore",
			"--param time: runbook pitr-restore has no such parameter (it takes: table, restore_point, damage)"},
		{"dynops runbook run pitr-restore --incident INC-1 --param table=$T --param restore_point=\"--time 2026-11-21T09:29:00Z\" --yes --through restore", ""},
		{"dynops pitr status --table x --colour", "unknown flag: --colour"},
		{"dynops pitr restor --table x", "`dynops pitr` has no subcommand \"restor\""},
		{"dynops runbook run pitr-restor", `no runbook "pitr-restor"`},
		{"dynops runbook run pitr-restore --until restored", "--until restored: runbook pitr-restore has no such step"},
		{"dynops runbook run pitr-restore --decide path=rollback", "--decide path=rollback: the choices are repair, cutover"},
		{"dynops audit log --since 2days", `invalid argument "2days"`},
		{"dynops audit log --since DURATION", ""},
		{"dynops export wait ARN [--wait-timeout 30m]", ""},
		{"dynops pitr", ""},
	}
	for _, c := range cases {
		err := CheckCommandLine(clidoc.Tree(), c.line)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want it to pass", c.line, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.line, err, c.want)
		}
	}

	md := strings.Join([]string{
		"Run `dynops pitr status --table",
		"prod-a-b` first.",
		"",
		"```sh",
		"$ dynops table diff --source a \\",
		"    --target b | jq .",
		"make build && bin/dynops check --env dev  # comment",
		"dynops nope --x # illustrative",
		"```",
		"",
		Illustrative,
		"```sh",
		"dynops gone --flag",
		"```",
		"",
		Illustrative,
		"Says `dynops gone too` here.",
		"",
		"```dynops",
		"run: dynops pitr status --table {{table}}",
		"```",
		"And `dynops version` again.",
	}, "\n")
	var got []string
	for _, d := range ExtractCommandLines("x.md", md) {
		got = append(got, fmt.Sprintf("%d %s", d.Line, d.Text))
	}
	want := []string{"1 dynops pitr status --table prod-a-b", "5 dynops table diff --source a --target b", "7 bin/dynops check --env dev", "22 dynops version"}
	if !slices.Equal(got, want) {
		t.Errorf("extracted %q\nwant      %q", got, want)
	}
}
