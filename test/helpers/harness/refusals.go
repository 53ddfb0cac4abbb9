package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// refusalFilesPerProcess is the fewest case files ExpectRefusals gives a
// `terraform test` process of its own.
const refusalFilesPerProcess = 8

// Refusal is one bad input of a validation matrix: the root's variables and
// the texts the refusal must carry. The first starts with the rule ID
// ("DDB-IDX-01: ..."); one error diagnostic's own detail must start with
// that rule ID and contain every text (findRefusal, as RequireRefusal).
type Refusal struct {
	Name string
	Vars map[string]any
	Want []string
}

// ExpectRefusals plans the root at dir once per case and asserts that each
// plan is refused with its Want texts, one subtest per case.
//
// The cases run as `terraform test` files with a mock aws provider, one file
// per case (terraform test skips a file's later runs after one fails), in a
// few `terraform test` processes: the provider's schema is loaded once per
// process instead of once per `terraform plan`, which is what a matrix of
// refused plans costs. Variable validations and preconditions on known
// values are evaluated by terraform itself, with or without the real
// provider; the plans that must succeed stay real plans (PlanOptions).
func ExpectRefusals(t *testing.T, dir string, cases []Refusal) {
	t.Helper()
	runRefusals(t, dir, cases).judge(t, cases)
}

// refusalRun is the outcome of one ExpectRefusals run: each case's file
// (per variant) and what terraform test said of each file.
type refusalRun struct {
	dir      string
	variants []RefusalVariant
	fileOf   map[refusalKey]string
	byFile   map[string]*fileResult
}

// refusalKey is a case of a run: its variant (-1: the root itself) and name.
type refusalKey struct {
	variant int
	name    string
}

// runRefusals writes one test file per case (and variant) and runs them in
// a few `terraform test` processes; it skips t when RefusalsRunEnv or
// RefusalsVariantsEnv leaves no case to run.
func runRefusals(t *testing.T, dir string, cases []Refusal) *refusalRun {
	t.Helper()
	if len(cases) == 0 {
		t.Fatal("ExpectRefusals: no cases")
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Fatalf("ExpectRefusals: case %q declared twice", c.Name)
		}
		seen[c.Name] = true
		if _, ok := ruleOf(c.Want); !ok {
			t.Fatalf("ExpectRefusals: case %q: its first wanted text must start with the rule ID (\"DDB-XXX-NN: ...\"), got %q", c.Name, c.Want)
		}
	}
	variants := refusalVariants(t, dir)
	if variants == nil {
		cases = onlyRefusals(t, cases)
	}
	tmp := copyRoot(t, dir)
	writeLocalBackend(t, tmp)
	testDir := filepath.Join(tmp, "dynops-refusals")
	if err := os.MkdirAll(testDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mocks := []map[string]any{{}}
	for _, alias := range append(providerAliases(t, tmp), configurationAliases(t, tmp)...) {
		mocks = append(mocks, map[string]any{"alias": alias})
	}
	// One file per case (and per variant): a run is planned against the
	// root, or against a variant's copy of it (`module { source }`).
	type planned struct {
		variant int // index in variants; -1: the root itself
		c       Refusal
	}
	var plan []planned
	if variants == nil {
		for _, c := range cases {
			plan = append(plan, planned{-1, c})
		}
	}
	for vi, v := range variants {
		for _, c := range cases {
			if v.cases.MatchString(c.Name) {
				plan = append(plan, planned{vi, c})
			}
		}
	}
	files := make([]string, len(plan))
	for i, p := range plan {
		run := map[string]any{"command": "plan", "variables": escapeTemplates(p.c.Vars)}
		if p.variant >= 0 {
			run["module"] = map[string]any{"source": variants[p.variant].source(t, tmp, dir)}
		}
		file := map[string]any{
			"mock_provider": map[string]any{"aws": mocks},
			"run":           map[string]any{"refused": run},
		}
		b, err := json.MarshalIndent(file, "", "  ")
		if err != nil {
			t.Fatalf("case %q: encoding its variables: %v", p.c.Name, err)
		}
		files[i] = fmt.Sprintf("dynops-refusals/case_%03d.tftest.json", i)
		if err := os.WriteFile(filepath.Join(tmp, files[i]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+CLIConfig(t), "TF_IN_AUTOMATION=1")
	dataDir := filepath.Join(t.TempDir(), "tfdata")
	env = append(env, "TF_DATA_DIR="+dataDir)
	initArgs := []string{"init", "-backend=false", "-input=false", "-no-color"}
	if variants != nil {
		// The variants are modules of the test files: init records them.
		initArgs = append(initArgs, "-test-directory", "dynops-refusals")
	}
	if out, err := terraformCmd(tmp, env, initArgs...).CombinedOutput(); err != nil {
		t.Fatalf("terraform init in %s: %v\n%s", dir, err, out)
	}

	// A few processes, each with its share of the files, but none with
	// fewer than refusalFilesPerProcess: a process costs about 4 CPU-s
	// before its first file (the provider schema, the module tree) and a
	// file about 1.3 (test/modules/dr, measured), so a small matrix is
	// cheaper in one process than spread over the cores.
	shards := max(1, min(runtime.GOMAXPROCS(0), len(files)/refusalFilesPerProcess))
	results := make([]map[string]*fileResult, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"test", "-json", "-no-color", "-test-directory", "dynops-refusals"}
			for i := s; i < len(files); i += shards {
				args = append(args, "-filter="+files[i])
			}
			var stdout, stderr bytes.Buffer
			cmd := terraformCmd(tmp, env, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run() // exit 1: the runs fail, as they must; judged per file below
			results[s], errs[s] = parseTestJSON(stdout.Bytes())
			if errs[s] == nil && len(results[s]) == 0 {
				errs[s] = fmt.Errorf("terraform test reported no file:\n%s%s", stdout.String(), stderr.String())
			}
		}()
	}
	wg.Wait()
	byFile := map[string]*fileResult{}
	for s := range shards {
		if errs[s] != nil {
			t.Fatalf("terraform test in %s: %v", dir, errs[s])
		}
		for f, r := range results[s] {
			byFile[f] = r
		}
	}

	run := &refusalRun{dir: dir, variants: variants, fileOf: map[refusalKey]string{}, byFile: byFile}
	for i, p := range plan {
		run.fileOf[refusalKey{p.variant, p.c.Name}] = files[i]
	}
	return run
}

// judge asserts that each of cases that ran was refused with its Want
// texts, one subtest per case (under one per variant), and returns the
// diagnostic that matched each (by case name), for tests that check more
// of it (its range).
func (r *refusalRun) judge(t *testing.T, cases []Refusal) map[string]Diagnostic {
	t.Helper()
	matched := map[string]Diagnostic{}
	one := func(t *testing.T, file string, c Refusal) {
		res := r.byFile[file]
		if res == nil {
			t.Fatalf("terraform test did not run %s", file)
		}
		if res.status == "pass" {
			t.Fatalf("the plan was not refused (variables %v); want %q", c.Vars, c.Want)
		}
		rule, _ := ruleOf(c.Want)
		d, seen, ok := findRefusal(res.errors, rule, c.Want)
		if !ok {
			t.Errorf("no error starts with %q and carries %q; terraform said:\n%s", rule+":", c.Want, strings.Join(seen, "\n"))
			return
		}
		matched[c.Name] = d
	}
	if r.variants == nil {
		var ran []Refusal
		var files []string
		for _, c := range cases {
			if file, ok := r.fileOf[refusalKey{-1, c.Name}]; ok {
				ran, files = append(ran, c), append(files, file)
			}
		}
		if len(ran) == 0 {
			t.Skipf("%s matches none of the %d cases", RefusalsRunEnv, len(cases))
		}
		reportRefusals(t, r.dir, ran, files, r.byFile)
		for i, c := range ran {
			t.Run(c.Name, func(t *testing.T) { one(t, files[i], c) })
		}
		return matched
	}
	for vi, v := range r.variants {
		t.Run(v.Name, func(t *testing.T) {
			for _, c := range cases {
				if file, ok := r.fileOf[refusalKey{vi, c.Name}]; ok {
					t.Run(c.Name, func(t *testing.T) { one(t, file, c) })
				}
			}
		})
	}
	return matched
}

// RefusalsVariantsEnv holds a JSON list of variants of the roots that
// ExpectRefusals plans: copies of a module folder (From, relative to the
// repository) at To, each with its own cases (Cases, a regexp of case
// names). The mutation check (test/tools/mutate) sets it to plan many mutants of
// one module in one `terraform test` process, each in its own copy of the
// module: the provider schema and the process are paid once per batch, not
// once per mutant. Each variant's cases run as subtests of a subtest named
// for the variant; the root's own cases do not run.
const RefusalsVariantsEnv = "DYNOPS_REFUSALS_VARIANTS"

// RefusalVariant is one entry of RefusalsVariantsEnv.
type RefusalVariant struct {
	Name  string `json:"name"`
	From  string `json:"from"`
	To    string `json:"to"`
	Cases string `json:"cases"`
	cases *regexp.Regexp
}

// source is the variant's copy of dir, relative to tmp (the copy of dir
// that terraform test runs in).
func (v RefusalVariant) source(t *testing.T, tmp, dir string) string {
	t.Helper()
	rest, err := filepath.Rel(v.From, dir)
	if err != nil || strings.HasPrefix(rest, "..") {
		t.Fatalf("%s: %s is not inside variant %s's folder %s", RefusalsVariantsEnv, dir, v.Name, v.From)
	}
	tree := strings.TrimSuffix(tmp, filepath.FromSlash(dir)) // copyRoot copies the tree, then points at dir
	src, err := filepath.Rel(tmp, filepath.Join(tree, v.To, rest))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(src)
}

// refusalVariants are the RefusalsVariantsEnv variants of dir's module;
// nil when the variable is unset. A variant of another module is not this
// call's: with the variable set, a call with none of its own runs nothing.
func refusalVariants(t *testing.T, dir string) []RefusalVariant {
	t.Helper()
	raw := os.Getenv(RefusalsVariantsEnv)
	if raw == "" {
		return nil
	}
	var all []RefusalVariant
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		t.Fatalf("%s: %v", RefusalsVariantsEnv, err)
	}
	out := []RefusalVariant{}
	for _, v := range all {
		if rest, err := filepath.Rel(v.From, dir); err != nil || strings.HasPrefix(rest, "..") {
			continue
		}
		re, err := regexp.Compile(v.Cases)
		if err != nil {
			t.Fatalf("%s: variant %s: cases %q: %v", RefusalsVariantsEnv, v.Name, v.Cases, err)
		}
		v.cases = re
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Skipf("%s: no variant of %s", RefusalsVariantsEnv, dir)
	}
	return out
}

// RefusalsRunEnv narrows ExpectRefusals to the cases whose name matches its
// regexp. The mutation check (test/tools/mutate) sets it so that a mutant of one
// validation pays terraform for that rule's cases only, not the module's
// whole matrix; `go test -run` cannot do that, because the cases are
// planned together before their subtests run.
const RefusalsRunEnv = "DYNOPS_REFUSALS_RUN"

// RefusalsReportEnv names a file to which ExpectRefusals appends one JSON
// line per case: the test, the case and the validation blocks that refused
// it ("modules/X/variables.tf:LINE", from terraform's "This was checked by
// the validation rule at FILE:LINE" detail). The mutation check reads it
// from an unmutated baseline run to give each validation's mutant only the
// cases that this validation refuses: a mutant of one validation block
// cannot change the refusal of a case that no diagnostic of the block refused.
const RefusalsReportEnv = "DYNOPS_REFUSALS_REPORT"

// RefusalReport is one line of the RefusalsReportEnv file.
type RefusalReport struct {
	Test   string   `json:"test"`
	Case   string   `json:"case"`
	Status string   `json:"status"`
	Rules  []string `json:"rules"` // repository-relative FILE:LINE of each refusing validation
}

var checkedByRe = regexp.MustCompile(`checked by the validation rule at (\S+?):(\d+),`)

func reportRefusals(t *testing.T, dir string, cases []Refusal, files []string, byFile map[string]*fileResult) {
	t.Helper()
	path := os.Getenv(RefusalsReportEnv)
	if path == "" {
		return
	}
	var buf bytes.Buffer
	for i, c := range cases {
		line := RefusalReport{Test: t.Name(), Case: c.Name, Rules: []string{}}
		if r := byFile[files[i]]; r != nil {
			line.Status = r.status
			for _, e := range r.errors {
				for _, m := range checkedByRe.FindAllStringSubmatch(strings.Join(strings.Fields(e.Detail), " "), -1) {
					line.Rules = append(line.Rules, filepath.ToSlash(filepath.Join(dir, m[1]))+":"+m[2])
				}
			}
		}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("%s=%s: %v", RefusalsReportEnv, path, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		t.Fatalf("%s=%s: %v", RefusalsReportEnv, path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("%s=%s: %v", RefusalsReportEnv, path, err)
	}
}

func onlyRefusals(t *testing.T, cases []Refusal) []Refusal {
	t.Helper()
	expr := os.Getenv(RefusalsRunEnv)
	if expr == "" {
		return cases
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("%s=%q: %v", RefusalsRunEnv, expr, err)
	}
	var out []Refusal
	for _, c := range cases {
		if re.MatchString(c.Name) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Skipf("%s=%q matches none of the %d cases", RefusalsRunEnv, expr, len(cases))
	}
	return out
}

func terraformCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("terraform", args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

type fileResult struct {
	status string       // the run's status: pass, fail, error
	errors []Diagnostic // the run's error diagnostics
}

// parseTestJSON reads `terraform test -json` (one JSON object per line).
func parseTestJSON(out []byte) (map[string]*fileResult, error) {
	res := map[string]*fileResult{}
	get := func(f string) *fileResult {
		if res[f] == nil {
			res[f] = &fileResult{}
		}
		return res[f]
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			Type       string     `json:"type"`
			File       string     `json:"@testfile"`
			Diagnostic Diagnostic `json:"diagnostic"`
			TestRun    struct {
				Progress string `json:"progress"`
				Status   string `json:"status"`
			} `json:"test_run"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("not terraform test JSON: %q: %w", sc.Text(), err)
		}
		if m.File == "" {
			continue
		}
		f := filepath.ToSlash(m.File)
		switch {
		case m.Type == "diagnostic" && m.Diagnostic.Severity == "error":
			r := get(f)
			r.errors = append(r.errors, m.Diagnostic)
		case m.Type == "test_run" && m.TestRun.Progress == "complete":
			get(f).status = m.TestRun.Status
		}
	}
	return res, sc.Err()
}

// escapeTemplates doubles "${" and "%{" in every string: a .tftest.json
// value is a template, a test's input is literal text.
func escapeTemplates(v any) any {
	switch x := v.(type) {
	case string:
		return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = escapeTemplates(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escapeTemplates(e)
		}
		return out
	default:
		// Typed slices and maps ([]string, map[string]string, ...) go through JSON.
		b, err := json.Marshal(x)
		if err != nil || len(b) == 0 || (b[0] != '[' && b[0] != '{' && b[0] != '"') {
			return x
		}
		var generic any
		if json.Unmarshal(b, &generic) != nil {
			return x
		}
		return escapeTemplates(generic)
	}
}

var configurationAliasesRe = regexp.MustCompile(`configuration_aliases\s*=\s*\[([^\]]*)\]`)

// configurationAliases are the aws aliases a module used as a root expects
// (configuration_aliases = [aws.secondary]).
func configurationAliases(t *testing.T, dir string) []string {
	t.Helper()
	tfs, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	var out []string
	for _, f := range tfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, m := range configurationAliasesRe.FindAllStringSubmatch(string(b), -1) {
			for _, a := range strings.Split(m[1], ",") {
				if a = strings.TrimSpace(a); strings.HasPrefix(a, "aws.") {
					out = append(out, strings.TrimPrefix(a, "aws."))
				}
			}
		}
	}
	return out
}
