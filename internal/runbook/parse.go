// Package runbook reads the executable runbooks: markdown a person reads,
// with machine-readable steps in fenced ```dynops blocks, and runs them step
// by step, carrying outputs forward and resuming after an interruption.
// The format is documented in runbooks/README.md.
package runbook

import (
	"bufio"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Runbook is one parsed runbook.
type Runbook struct {
	Name     string  `json:"name"`
	Title    string  `json:"title"`
	Params   []Param `json:"params"`
	Steps    []Step  `json:"steps"`
	Markdown string  `json:"-"`
}

// Param is a value the person running the runbook gives (--param k=v).
type Param struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     string `json:"default,omitempty"`
	HasDefault  bool   `json:"has_default"`
}

// Step is one command the runbook runs.
type Step struct {
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Run         string `json:"run"` // a dynops command line with {{name}} placeholders
	Destructive bool   `json:"destructive"`
	// DryRun marks a step that runs a changing command without --yes on
	// purpose, for its plan (the runner never adds --yes to it).
	DryRun    bool     `json:"dry_run,omitempty"`
	Outputs   []Output `json:"outputs,omitempty"`
	Checks    []Check  `json:"checks,omitempty"`
	AllowExit []int    `json:"allow_exit,omitempty"` // exit codes that still let the runbook go on (default 0)
	// Confirm are the names (templates of params; a comma-separated
	// value is several) of the protected targets a step may change or
	// invoke: the --confirm values of `run` that name one of them are
	// passed to the step.
	Confirm []string `json:"confirm,omitempty"`
	// Choices make the step a decision (no run): the path the runbook
	// takes from here, asked on a terminal even with --yes, given with
	// --decide STEP=CHOICE, else Default.
	Choices []string `json:"choices,omitempty"`
	Default string   `json:"default,omitempty"`
	// When runs the step only on one choice of an earlier decision:
	// "DECISION=CHOICE".
	When string `json:"when,omitempty"`
	Line int    `json:"line"`
}

// IsDecision reports whether the step is a choice, not a command.
func (s Step) IsDecision() bool { return len(s.Choices) > 0 }

// Output names a value of the step's JSON output (-o json) for later steps.
type Output struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Check is a condition on the step's JSON output the runbook stops on.
type Check struct {
	Path  string `json:"path"`
	Op    string `json:"op"` // == != > >= < <= exists
	Value string `json:"value,omitempty"`
	Text  string `json:"text"`
}

var (
	nameRe        = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	stepIDRe      = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	placeholderRe = regexp.MustCompile(`\{\{\s*([^{}\s]*)\s*\}\}`)
)

// Builtins are the placeholders every runbook may use.
var Builtins = map[string]string{
	"incident":  "the incident id (--incident)",
	"state_dir": "a private directory of this incident's run, for files steps hand on (keys files)",
	"started":   "when the runbook run began, UTC, e.g. 20261121t093512z (stable across resumes)",
}

// Parse reads a runbook from its markdown.
func Parse(name, md string) (*Runbook, error) {
	rb := &Runbook{Name: name, Markdown: md}
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	line := 0
	var heading string
	var block []string
	blockKind, blockStart := "", 0
	for sc.Scan() {
		line++
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if blockKind != "" {
			if strings.HasPrefix(trimmed, "```") {
				if err := rb.addBlock(blockKind, block, blockStart, heading); err != nil {
					return nil, fmt.Errorf("runbook %s line %d: %w", name, blockStart, err)
				}
				blockKind, block = "", nil
				continue
			}
			block = append(block, text)
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			switch info {
			case "dynops", "dynops-params":
				blockKind, blockStart = info, line
			default:
				blockKind, blockStart = "other", line
			}
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			if rb.Title == "" {
				rb.Title = heading
			}
		}
	}
	if blockKind != "" {
		return nil, fmt.Errorf("runbook %s line %d: the fenced block is not closed", name, blockStart)
	}
	if len(rb.Steps) == 0 {
		return nil, fmt.Errorf("runbook %s has no ```dynops step blocks", name)
	}
	return rb, rb.validate()
}

func (rb *Runbook) addBlock(kind string, lines []string, start int, heading string) error {
	switch kind {
	case "other":
		return nil
	case "dynops-params":
		for i, l := range lines {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			k, v, ok := strings.Cut(l, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || !nameRe.MatchString(k) {
				return fmt.Errorf("params line %d %q: write `name: description [default: VALUE]` (names: a-z, 0-9, _)", i+1, l)
			}
			p := Param{Name: k, Description: v}
			if j := strings.LastIndex(v, "[default:"); j >= 0 && strings.HasSuffix(v, "]") {
				p.Default = strings.TrimSpace(v[j+len("[default:") : len(v)-1])
				p.HasDefault = true
				p.Description = strings.TrimSpace(v[:j])
			}
			rb.Params = append(rb.Params, p)
		}
		return nil
	}
	st := Step{Line: start, Title: heading}
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return fmt.Errorf("step line %d %q: write `key: value` (keys: step, run, destructive, dry-run, confirm, output, check, allow-exit, choose, default, when)", i+1, l)
		}
		switch k {
		case "step":
			st.ID = v
		case "run":
			st.Run = strings.TrimSpace(strings.TrimPrefix(v, "dynops "))
		case "destructive":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("step line %d: destructive: %q is not true or false", i+1, v)
			}
			st.Destructive = b
		case "dry-run":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("step line %d: dry-run: %q is not true or false", i+1, v)
			}
			st.DryRun = b
		case "confirm":
			for _, t := range strings.Split(v, ",") {
				if t = strings.TrimSpace(t); t != "" {
					st.Confirm = append(st.Confirm, t)
				}
			}
		case "output":
			n, p, ok := strings.Cut(v, "=")
			n, p = strings.TrimSpace(n), strings.TrimSpace(p)
			if !ok || !nameRe.MatchString(n) || !strings.HasPrefix(p, ".") {
				return fmt.Errorf("step line %d: output %q: write `output: name = .json.path`", i+1, v)
			}
			st.Outputs = append(st.Outputs, Output{Name: n, Path: p})
		case "check":
			c, err := parseCheck(v)
			if err != nil {
				return fmt.Errorf("step line %d: %w", i+1, err)
			}
			st.Checks = append(st.Checks, c)
		case "choose":
			for _, c := range strings.Split(v, ",") {
				if c = strings.TrimSpace(c); c != "" {
					st.Choices = append(st.Choices, c)
				}
			}
		case "default":
			st.Default = v
		case "when":
			st.When = v
		case "allow-exit":
			for _, s := range strings.Split(v, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil {
					return fmt.Errorf("step line %d: allow-exit %q: a list of exit codes, e.g. 0,1", i+1, v)
				}
				st.AllowExit = append(st.AllowExit, n)
			}
		default:
			return fmt.Errorf("step line %d: unknown key %q (keys: step, run, destructive, dry-run, confirm, output, check, allow-exit, choose, default, when)", i+1, k)
		}
	}
	rb.Steps = append(rb.Steps, st)
	return nil
}

var ops = []string{">=", "<=", "==", "!=", ">", "<"}

func parseCheck(v string) (Check, error) {
	c := Check{Text: v}
	fields := strings.Fields(v)
	if len(fields) == 2 && fields[1] == "exists" {
		c.Path, c.Op = fields[0], "exists"
	} else if len(fields) == 3 && contains(ops, fields[1]) {
		c.Path, c.Op, c.Value = fields[0], fields[1], strings.Trim(fields[2], `"`)
	} else {
		return c, fmt.Errorf("check %q: write `.json.path OP VALUE` (OP: == != > >= < <=) or `.json.path exists`", v)
	}
	if !strings.HasPrefix(c.Path, ".") {
		return c, fmt.Errorf("check %q: the path starts with a dot, e.g. .summary.fail", v)
	}
	return c, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// validate checks ids and that every placeholder is a param, a builtin or
// an output of an earlier step.
func (rb *Runbook) validate() error {
	known := map[string]string{}
	for k := range Builtins {
		known[k] = "builtin"
	}
	for _, p := range rb.Params {
		if _, dup := known[p.Name]; dup {
			return fmt.Errorf("runbook %s: param %q is declared twice (or is a builtin)", rb.Name, p.Name)
		}
		known[p.Name] = "param"
	}
	ids := map[string]bool{}
	decisions := map[string][]string{}
	for _, st := range rb.Steps {
		where := fmt.Sprintf("runbook %s step %q (line %d)", rb.Name, st.ID, st.Line)
		if !stepIDRe.MatchString(st.ID) {
			return fmt.Errorf("%s: `step: ID` is missing or not a-z, 0-9, -", where)
		}
		if ids[st.ID] {
			return fmt.Errorf("%s: the step id is used twice", where)
		}
		ids[st.ID] = true
		if st.IsDecision() {
			if st.Run != "" || len(st.Choices) < 2 {
				return fmt.Errorf("%s: a decision (`choose: a, b`) has two or more choices and no `run`", where)
			}
			for _, c := range st.Choices {
				if !stepIDRe.MatchString(c) {
					return fmt.Errorf("%s: choice %q is not a-z, 0-9, -", where, c)
				}
			}
			if st.Default != "" && !contains(st.Choices, st.Default) {
				return fmt.Errorf("%s: default %q is not one of its choices (%s)", where, st.Default, strings.Join(st.Choices, ", "))
			}
			decisions[st.ID] = st.Choices
			continue
		}
		if st.Default != "" {
			return fmt.Errorf("%s: `default` belongs to a decision (`choose: a, b`)", where)
		}
		if st.When != "" {
			d, c, ok := strings.Cut(st.When, "=")
			if !ok || !contains(decisions[strings.TrimSpace(d)], strings.TrimSpace(c)) {
				return fmt.Errorf("%s: when %q: write `when: DECISION=CHOICE` naming an earlier decision and one of its choices", where, st.When)
			}
		}
		if st.Run == "" {
			return fmt.Errorf("%s: `run: dynops ...` is missing", where)
		}
		if st.DryRun && (st.Destructive || len(st.Confirm) > 0 || slices.Contains(strings.Fields(st.Run), "--yes")) {
			return fmt.Errorf("%s: a `dry-run: true` step shows a plan and changes nothing: no `destructive`, `confirm` or --yes", where)
		}
		text := st.Run
		for _, c := range st.Checks {
			text += " " + c.Value
		}
		for _, m := range placeholderRe.FindAllStringSubmatch(text, -1) {
			if _, ok := known[baseName(m[1])]; !ok {
				return fmt.Errorf("%s: {{%s}} is neither a param (```dynops-params), a builtin (incident, state_dir, started) nor an output of an earlier step", where, m[1])
			}
		}
		for _, c := range st.Confirm {
			for _, m := range placeholderRe.FindAllStringSubmatch(c, -1) {
				if known[baseName(m[1])] != "param" {
					return fmt.Errorf("%s: confirm %q: {{%s}} is not a param; the targets to confirm are known before the first step, so they are made of params only", where, c, m[1])
				}
			}
		}
		for _, o := range st.Outputs {
			known[o.Name] = "output of " + st.ID
		}
	}
	return nil
}

const basenameFilter = "|basename"

// baseName is the variable a placeholder reads (without its filter).
func baseName(placeholder string) string {
	return strings.TrimSuffix(placeholder, basenameFilter)
}

// Placeholders lists the {{names}} in s.
func Placeholders(s string) []string {
	var out []string
	for _, m := range placeholderRe.FindAllStringSubmatch(s, -1) {
		out = append(out, baseName(m[1]))
	}
	return out
}

// Expand replaces the placeholders of s with vars; a missing one is an error.
//
// {{name|basename}} is the value's last /-separated part (a queue's name
// from its URL).
func Expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRe.FindStringSubmatch(m)[1]
		v, ok := vars[baseName(name)]
		if !ok {
			missing = append(missing, name)
		}
		if strings.HasSuffix(name, basenameFilter) {
			v = v[strings.LastIndex(v, "/")+1:]
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for {{%s}}", strings.Join(missing, "}}, {{"))
	}
	return out, nil
}

// Split splits a command line into arguments: spaces separate, single and
// double quotes group, a backslash escapes the next character.
func Split(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inArg = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unclosed quote or trailing backslash in %q", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// LoadAll parses every NAME.md of fsys (README.md aside), sorted by name.
func LoadAll(fsys fs.FS) ([]*Runbook, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Runbook
	for _, n := range names {
		if strings.EqualFold(n, "README.md") {
			continue
		}
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		rb, err := Parse(strings.TrimSuffix(n, ".md"), string(data))
		if err != nil {
			return nil, err
		}
		out = append(out, rb)
	}
	return out, nil
}

// Find returns the runbook called name.
func Find(fsys fs.FS, name string) (*Runbook, error) {
	all, err := LoadAll(fsys)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, rb := range all {
		if rb.Name == name || rb.Name+".md" == name {
			return rb, nil
		}
		names = append(names, rb.Name)
	}
	return nil, fmt.Errorf("no runbook %q: the runbooks are %s (`dynops runbook list`)", name, strings.Join(names, ", "))
}
