// Command mutate is the mutation check behind `make mutate`: it breaks the
// production code on purpose, one small change at a time, runs only the tests
// that should notice, and reports which breaks (mutants) no test noticed.
//
//   - go: gremlins (a maintained Go mutation tool) over each package of
//     internal/, with the kill rate per package;
//   - rego: every deny rule of policies/*.rego disabled in turn (a `false`
//     first in its body), against the policy fixtures;
//   - tf: every validation block of modules/*/variables.tf, in turn with its
//     condition forced true (the guard gone) and with its message cut to the
//     rule ID (the "says how to fix it" half gone), against the module's
//     validation tests for that rule ID.
//
// The Rego and Terraform mutants run in a copy of the repository, so an
// interrupted run never leaves a broken file behind.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/dynops/dynops/test/helpers/harness"
)

func main() {
	var (
		kinds   = flag.String("kind", "rego,tf,go", "which mutants: rego, tf, go (comma-separated)")
		only    = flag.String("only", "", "regexp: only mutants whose name matches")
		list    = flag.Bool("list", false, "list the mutants and run nothing")
		timeout = flag.Duration("timeout", 10*time.Minute, "longest test run for one mutant")
		pkgs    = flag.String("packages", "./internal/...", "go: folders for gremlins, comma-separated (./internal/... is each folder of internal/)")
		workers = flag.Int("workers", 1, "go: gremlins --workers")
		coeff   = flag.Int("timeout-coefficient", 4, "go: gremlins --timeout-coefficient (a mutant's test run may take this many times the package's covered run)")
	)
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	var filter *regexp.Regexp
	if *only != "" {
		if filter, err = regexp.Compile(*only); err != nil {
			fail(fmt.Errorf("--only %q: %w", *only, err))
		}
	}
	allow, err := readAllowlist(root)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	survivors := 0
	for _, k := range strings.Split(*kinds, ",") {
		switch strings.TrimSpace(k) {
		case "rego", "tf":
			ms, err := textMutants(root, strings.TrimSpace(k))
			if err != nil {
				fail(err)
			}
			ms = keep(ms, filter)
			if *list {
				for _, m := range ms {
					fmt.Printf("%s\t%s\n", m.Name, strings.Join(m.Test, " "))
				}
				continue
			}
			n, err := runTextMutants(ctx, root, ms, *timeout, allow)
			if err != nil {
				fail(err)
			}
			survivors += n
		case "go":
			if *list {
				fmt.Println("go: gremlins over", *pkgs)
				continue
			}
			n, err := runGremlins(ctx, root, *pkgs, *timeout, *workers, *coeff, allow)
			if err != nil {
				fail(err)
			}
			survivors += n
		default:
			fail(fmt.Errorf("--kind %q: use rego, tf or go", k))
		}
	}
	if survivors > 0 {
		fmt.Printf("\n%d mutant(s) below their goal: see the tables above\n", survivors)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}

// Mutant is one deliberate break of a text file, and the test run that must fail.
type Mutant struct {
	Name     string
	File     string // relative to the repository root
	Original string
	Mutated  string
	Test     []string // argv, run in the copy's root
	Env      []string // added to the test run's environment
	// Prebuilt: Test is `go test` of one package whose Go code the mutant
	// does not touch; its test binary is built once and run directly
	// (linking a Terratest binary costs more than most mutants' tests).
	Prebuilt bool
	// Judge matches a `go test -v` line of a test that must fail for the
	// mutant to count as killed: a failure elsewhere (a broken build, a
	// flaky emulator) proves nothing about this mutant.
	Judge *regexp.Regexp
	// Validation (tf mutants): the mutated block, "modules/X/variables.tf:LINE"
	// as terraform cites it, and the cases that may judge it: named for
	// the rule (CaseRe) and, in the unmutated baseline run of Baseline,
	// refused by this block (see selectCases).
	Validation string
	CaseRe     *regexp.Regexp
	Baseline   []string
	Tests      string // the top-level tests, a regexp alternation
	Rule       string // the rule ID its cases are named for
}

func keep(ms []Mutant, filter *regexp.Regexp) []Mutant {
	if filter == nil {
		return ms
	}
	var out []Mutant
	for _, m := range ms {
		if filter.MatchString(m.Name) {
			out = append(out, m)
		}
	}
	return out
}

func textMutants(root, kind string) ([]Mutant, error) {
	switch kind {
	case "rego":
		return regoMutants(root)
	default:
		return tfMutants(root)
	}
}

// denyRule starts a deny rule's body: `deny contains msg if {`.
var denyRule = regexp.MustCompile(`(?m)^deny\s+contains\s+\w+\s+if\s*\{[ \t]*$`)

// regoMutants disables each deny rule in turn.
func regoMutants(root string) ([]Mutant, error) {
	files, err := filepath.Glob(filepath.Join(root, "policies", "*.rego"))
	if err != nil {
		return nil, err
	}
	var out []Mutant
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src := string(b)
		rel, _ := filepath.Rel(root, f)
		for i, loc := range denyRule.FindAllStringIndex(src, -1) {
			line := 1 + strings.Count(src[:loc[0]], "\n")
			id := ruleIDAfter(src[loc[1]:])
			out = append(out, Mutant{
				Name:     fmt.Sprintf("rego %s:%d deny #%d %s disabled", rel, line, i+1, id),
				File:     rel,
				Original: src,
				Mutated:  src[:loc[1]] + "\n\tfalse # mutant" + src[loc[1]:],
				Test:     regoTest,
				Judge:    regoJudge,
			})
		}
	}
	return out, nil
}

// regoTest runs the fixture tests: every bad fixture denied with its full
// message set, and every deny rule reached by some bad fixture (OPA
// coverage), so a rule that shares its ID with another one still counts.
var (
	regoTest  = []string{"go", "test", "-count=1", "-v", "-run", "^(TestFixtures|TestEveryGuardRuleHasABadFixture|TestEveryDenyRuleFires)$", "./policies/"}
	regoJudge = regexp.MustCompile(`^\s*--- FAIL: (TestFixtures|TestEveryGuardRuleHasABadFixture|TestEveryDenyRuleFires)\b`)
)

var ruleIDRe = regexp.MustCompile(`DDB-[A-Z]+-[0-9]{2}`)

// ruleIDAfter is the first rule ID in the rule's body (up to the next rule).
func ruleIDAfter(body string) string {
	if end := denyRule.FindStringIndex(body); end != nil {
		body = body[:end[0]]
	}
	if id := ruleIDRe.FindString(body); id != "" {
		return id
	}
	return "(no rule ID)"
}

// moduleTests maps a module to the Go package and the top-level tests
// (harness.ExpectRefusals matrices) whose cases cover its validations; each
// case is named for its rule ID ("DDB-PITR-01 what").
var moduleTests = map[string]struct{ pkg, tests string }{
	"dynamodb-table":         {"./test/modules/table/", "TestPlanValidations"},
	"dynamodb-table-replica": {"./test/modules/table/", "TestPlanReplicaRefusals"},
	"dynamodb-alarms":        {"./test/modules/alarms/", "TestPlanValidations"},
	"alarm-topic":            {"./test/modules/alarms/", "TestPlanAlarmTopicValidations"},
	"stream-consumer":        {"./test/modules/streamconsumer/", "TestPlanValidations"},
	"dynamodb-export":        {"./test/cli/export/", "TestPlanValidations"},
	"dynamodb-access":        {"./test/modules/access/", "TestPlanValidations"},
	"dr":                     {"./test/modules/dr/", "TestPlanValidations|TestPlanModuleValidations"},
	"dynamodb-stack":         {"./test/modules/table/", "TestPlanStackValidations"},
	"ci-test-role":           {"./test/modules/citest/", "TestPlanCITestRoleValidations_DDB_SEC_01"},
	"dynamodb-vpc-endpoint":  {"./test/modules/security/", "TestPlanVPCEndpointValidations_DDB_SEC_05"},
	"dynamodb-readiness":     {"./test/modules/access/", "TestPlanReadinessValidations"},
	"cloudtrail-data-events": {"./test/modules/security/", "TestPlanCloudTrailValidations_DDB_SEC_06"},
	"dynops-batch":           {"./test/modules/batch/", "TestPlanBatchValidations"},
	"dynops-runner":          {"./test/modules/runner/", "TestPlanRunnerValidations_DDB_SEC_01"},
}

var (
	// The message is a quoted template; its end is found by hclStringEnd,
	// since a ${...} inside it may hold quoted strings of its own.
	validationBlock = regexp.MustCompile(`(?s)validation\s*\{\s*condition\s*=\s*(.*?)\n\s*error_message\s*=\s*(")`)
	variableName    = regexp.MustCompile(`(?m)^variable\s+"([^"]+)"`)
)

// tfMutants makes two mutants per validation block: guard gone, fix text gone.
func tfMutants(root string) ([]Mutant, error) {
	files, err := filepath.Glob(filepath.Join(root, "modules", "*", "variables.tf"))
	if err != nil {
		return nil, err
	}
	var out []Mutant
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src := string(b)
		rel, _ := filepath.Rel(root, f)
		module := filepath.Base(filepath.Dir(f))
		mt, ok := moduleTests[module]
		if !ok {
			return nil, fmt.Errorf("%s: no test package known for module %s: add it to moduleTests in test/tools/mutate", rel, module)
		}
		for _, m := range validationBlock.FindAllStringSubmatchIndex(src, -1) {
			end := hclStringEnd(src, m[4])
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: error_message: no end to its quoted string", rel, 1+strings.Count(src[:m[4]], "\n"))
			}
			m[5] = end
			msg := src[m[4]:m[5]]
			line := 1 + strings.Count(src[:m[0]], "\n")
			variable := "?"
			if vs := variableName.FindAllStringSubmatch(src[:m[0]], -1); len(vs) > 0 {
				variable = vs[len(vs)-1][1]
			}
			id := ruleIDRe.FindString(msg)
			if id == "" {
				id = "(no rule ID)"
			}
			// Only this rule's cases: -run selects the subtests, the
			// harness's DYNOPS_REFUSALS_RUN the plans terraform makes.
			caseRe := "^" + regexp.QuoteMeta(id) + "[ _]"
			test := []string{"go", "test", "-count=1", "-v", "-run", "^(" + mt.tests + ")$/" + caseRe, mt.pkg}
			// The refusals plan with a mock provider and call no AWS
			// API: DYNOPS_TEST_TARGET=aws keeps harness.Main from
			// starting moto for every mutant, and GOMAXPROCS=1 keeps it
			// to one `terraform test` process. The harness's
			// DYNOPS_REFUSALS_RUN (the cases terraform plans) is set per
			// mutant by selectCases.
			env := []string{"DYNOPS_TEST_TARGET=aws", "GOMAXPROCS=1"}
			judge := regexp.MustCompile(`^\s*--- FAIL: (` + mt.tests + `)/` + regexp.QuoteMeta(id) + `_`)
			where := fmt.Sprintf("%s:%d var.%s %s", rel, line, variable, id)
			base := Mutant{
				File:       rel,
				Original:   src,
				Test:       test,
				Env:        env,
				Judge:      judge,
				Prebuilt:   true,
				Validation: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), line),
				CaseRe:     regexp.MustCompile(caseRe),
				Baseline:   []string{"go", "test", "-count=1", "-v", "-run", "^(" + mt.tests + ")$", mt.pkg},
				Tests:      mt.tests,
				Rule:       id,
			}
			guard, fix := base, base
			guard.Name = "tf " + where + " guard removed"
			// Terraform refuses a condition that does not refer to its
			// variable, so the guard is ORed away.
			guard.Mutated = src[:m[2]] + "var." + variable + " == null || true" + src[m[3]:]
			fix.Name = "tf " + where + " fix text removed"
			fix.Mutated = src[:m[4]] + fmt.Sprintf("%q", id+": invalid "+variable+".") + src[m[5]:]
			out = append(out, guard, fix)
		}
	}
	return out, nil
}

// hclStringEnd returns the index just past the quoted HCL template that
// starts at src[start] (a '"'), skipping escapes and the ${...} and %{...}
// interpolations with any quoted strings and braces inside them; -1 when it
// does not end.
func hclStringEnd(src string, start int) int {
	i := start + 1
	for i < len(src) {
		switch c := src[i]; {
		case c == '\\':
			i += 2
		case c == '"':
			return i + 1
		case (c == '$' || c == '%') && strings.HasPrefix(src[i+1:], string(c)+"{"):
			i += 3 // $${ and %%{ are literals
		case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
			depth := 1
			i += 2
			for i < len(src) && depth > 0 {
				switch src[i] {
				case '{':
					depth++
					i++
				case '}':
					depth--
					i++
				case '"':
					if i = hclStringEnd(src, i); i < 0 {
						return -1
					}
				default:
					i++
				}
			}
		default:
			i++
		}
	}
	return -1
}

// The states of a judged mutant.
const (
	killed    = "killed"
	survived  = "SURVIVED"
	timedOut  = "TIMED OUT"  // not counted as killed: the test may hang for another reason
	notJudged = "NOT JUDGED" // the build broke, or no test for this mutant ran and failed
)

type result struct {
	Mutant
	State      string
	Equivalent string // the allowlist's reason, for a survivor listed there
	Elapsed    time.Duration
	CPU        time.Duration
	Output     string
}

// runTextMutants runs each mutant in a copy of the repository and prints a
// table; it returns how many did not reach the goal (killed, or listed as
// equivalent).
func runTextMutants(ctx context.Context, root string, ms []Mutant, timeout time.Duration, allow allowlist) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	// The copy's path stays the same from run to run (one per kind of
	// mutant, so that two kinds can run at once): Go's build cache keys on
	// the path, and a fresh path would rebuild every dependency first.
	kind, _, _ := strings.Cut(ms[0].Name, " ")
	work := filepath.Join(os.TempDir(), "dynops-mutate-"+kind)
	if err := os.RemoveAll(work); err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	if err := copyTree(root, work); err != nil {
		return 0, fmt.Errorf("copying the repository: %w", err)
	}
	// The unmutated tree must pass each test run that judges mutants, or a
	// failure would be counted as a kill. The Terraform mutants have one
	// baseline per module (below), and are judged by a failing subtest of
	// the mutant's own rule.
	baselines := map[string]bool{}
	for _, m := range ms {
		key := strings.Join(m.Env, " ") + " " + strings.Join(m.Test, " ")
		if _, done := baselines[key]; done || m.Baseline != nil {
			continue
		}
		start := time.Now()
		out, err := run(ctx, work, timeout, m.Test, m.Env)
		if err != nil {
			return 0, fmt.Errorf("baseline %s fails without a mutant (%s); fix the suite first:\n%s", strings.Join(m.Test, " "), err, lastLines(out, 30))
		}
		fmt.Fprintf(os.Stderr, "baseline ok: %s (%s)\n", strings.Join(m.Test, " "), time.Since(start).Round(time.Second))
		baselines[key] = true
	}
	bins := map[string]string{}
	// The Terraform mutants: one unmutated run of each module's whole
	// validation matrix, which must pass and tells which validation block
	// refused each case.
	// Only the cases named for the rules of the mutants run (all of them
	// in a full run; few in a run narrowed by -only).
	rules := map[string][]string{}
	for _, m := range ms {
		if key := strings.Join(m.Baseline, " "); m.Baseline != nil && !slices.Contains(rules[key], m.CaseRe.String()) {
			rules[key] = append(rules[key], m.CaseRe.String())
		}
	}
	refusedBy := map[string][]refusalReport{}
	for _, m := range ms {
		key := strings.Join(m.Baseline, " ")
		if m.Baseline == nil || refusedBy[key] != nil {
			continue
		}
		start := time.Now()
		reports, err := baselineRefusals(ctx, work, m, "("+strings.Join(rules[key], "|")+")", timeout, bins)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(os.Stderr, "baseline ok: %s: %d cases (%s)\n", key, len(reports), time.Since(start).Round(time.Second))
		if reports == nil {
			reports = []refusalReport{} // no case of these rules: each mutant survives
		}
		refusedBy[key] = reports
	}
	results := make([]result, len(ms))
	var batch []batched
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := runBatch(ctx, work, batch, timeout, bins, allow, results, len(ms))
		batch = nil
		return err
	}
	for i, m := range ms {
		if m.Baseline != nil {
			cases := selectCases(m, refusedBy[strings.Join(m.Baseline, " ")])
			if len(cases) == 0 {
				// No case for this rule is refused by this block: the
				// mutant cannot fail any of them (their refusals come
				// from other blocks, which the mutant leaves alone).
				r := result{Mutant: m, State: survived, Output: fmt.Sprintf("no case of `%s` named for the rule (%s) is refused by %s in the unmutated run: add one", strings.Join(m.Baseline, " "), m.CaseRe, m.Validation)}
				r.Equivalent = allow.reason(m.Name)
				results[i] = r
				fmt.Fprintf(os.Stderr, "[%d/%d] %-10s %s (no case)\n", i+1, len(ms), r.State, m.Name)
				continue
			}
			if len(batch) > 0 && (len(batch) == batchSize || strings.Join(batch[0].Baseline, " ") != strings.Join(m.Baseline, " ")) {
				if err := flush(); err != nil {
					return 0, err
				}
			}
			batch = append(batch, batched{Mutant: m, index: i, cases: cases})
			continue
		}
		path := filepath.Join(work, m.File)
		if err := os.WriteFile(path, []byte(m.Mutated), 0o644); err != nil {
			return 0, err
		}
		start := time.Now()
		dir, argv := work, m.Test
		if m.Prebuilt {
			var err error
			if dir, argv, err = prebuilt(ctx, work, m.Test, bins); err != nil {
				return 0, err
			}
		}
		out, cpu, runErr := runCPU(ctx, dir, timeout, argv, m.Env)
		if err := os.WriteFile(path, []byte(m.Original), 0o644); err != nil {
			return 0, err
		}
		r := result{Mutant: m, Elapsed: time.Since(start), CPU: cpu, Output: out}
		r.State = judge(m, out, runErr)
		if r.State != killed {
			r.Equivalent = allow.reason(m.Name)
		}
		results[i] = r
		fmt.Fprintf(os.Stderr, "[%d/%d] %-10s %s (%s, %.1f s cpu)\n", i+1, len(ms), r.State, m.Name, r.Elapsed.Round(time.Second), r.CPU.Seconds())
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return report(results), nil
}

// batchSize is how many Terraform mutants of one module share a test run.
// Each is planned in its own copy of the module (a harness variant), so a
// mutant cannot mask another; the run's fixed cost (the test binary,
// terraform init, the `terraform test` process and its first provider
// schema load) is paid once per batch.
const batchSize = 16

type batched struct {
	Mutant
	index int      // in the list of mutants
	cases []string // the cases that judge it (selectCases)
}

// runBatch plans a batch of Terraform mutants of one module in one test run:
// each mutant is a copy of its module folder with the mutated file, given to
// harness.ExpectRefusals as a variant with its own cases, whose subtests
// are named for the variant; a mutant is killed when a subtest of its own
// variant and rule fails.
func runBatch(ctx context.Context, work string, batch []batched, timeout time.Duration, bins map[string]string, allow allowlist, results []result, total int) error {
	var variants []harness.RefusalVariant
	var tags []string
	for _, b := range batch {
		tag := fmt.Sprintf("m%03d", b.index+1)
		from := filepath.ToSlash(filepath.Dir(b.File))
		to := from + "__" + tag
		if err := copyDir(filepath.Join(work, from), filepath.Join(work, to)); err != nil {
			return err
		}
		defer os.RemoveAll(filepath.Join(work, to))
		if err := os.WriteFile(filepath.Join(work, to, filepath.Base(b.File)), []byte(b.Mutated), 0o644); err != nil {
			return err
		}
		variants = append(variants, harness.RefusalVariant{Name: tag, From: from, To: to, Cases: casesRe(b.cases)})
		tags = append(tags, tag)
	}
	spec, err := json.Marshal(variants)
	if err != nil {
		return err
	}
	first := batch[0]
	test := []string{"go", "test", "-count=1", "-v", "-run", "^(" + first.Tests + ")$/^(" + strings.Join(tags, "|") + ")$", first.Test[len(first.Test)-1]}
	dir, argv, err := prebuilt(ctx, work, test, bins)
	if err != nil {
		return err
	}
	env := append(append([]string(nil), first.Env...), harness.RefusalsVariantsEnv+"="+string(spec))
	start := time.Now()
	out, cpu, runErr := runCPU(ctx, dir, timeout, argv, env)
	elapsed := time.Since(start)
	n := time.Duration(len(batch))
	for i, b := range batch {
		m := b.Mutant
		prefix := `^\s*--- (FAIL|PASS): (` + m.Tests + `)/` + tags[i] + `/` + regexp.QuoteMeta(m.Rule) + `_`
		r := result{Mutant: m, Elapsed: elapsed / n, CPU: cpu / n, Output: linesWith(out, "/"+tags[i]+"/")}
		r.State = judgeVariant(regexp.MustCompile(prefix), out, runErr)
		if r.State != killed {
			r.Equivalent = allow.reason(m.Name)
		}
		results[b.index] = r
		fmt.Fprintf(os.Stderr, "[%d/%d] %-10s %s (batch of %d: %s, %.1f s cpu)\n", b.index+1, total, r.State, m.Name, len(batch), elapsed.Round(time.Second), cpu.Seconds())
	}
	return nil
}

// judgeVariant decides a batched mutant's state from the lines of its own
// variant's subtests (re matches `--- FAIL` and `--- PASS` lines of them):
// killed when one failed, survived when they ran and passed.
func judgeVariant(re *regexp.Regexp, out string, runErr error) string {
	ran := false
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			if m[1] == "FAIL" {
				return killed
			}
			ran = true
		}
	}
	switch {
	case errors.Is(runErr, errTimedOut):
		return timedOut
	case ran:
		return survived
	}
	return notJudged
}

// linesWith is the lines of s that contain sub, and the last lines of s.
func linesWith(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n" + lastLines(s, 5)
}

// copyDir copies a folder of the work copy (a module), without terraform's
// working files.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return copyFile(path, filepath.Join(dst, rel), info.Mode().Perm())
	})
}

// refusalReport is a line of harness.RefusalsReportEnv's file.
type refusalReport = harness.RefusalReport

// baselineRefusals runs m.Baseline (a module's whole validation matrix) on
// the unmutated copy, which must pass, and returns the harness's report of
// which validation blocks refused each case.
func baselineRefusals(ctx context.Context, work string, m Mutant, cases string, timeout time.Duration, bins map[string]string) ([]refusalReport, error) {
	report := filepath.Join(work, ".mutate-bin", "refusals-"+fmt.Sprint(time.Now().UnixNano())+".jsonl")
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		return nil, err
	}
	dir, argv, err := prebuilt(ctx, work, m.Baseline, bins)
	if err != nil {
		return nil, err
	}
	env := append(append([]string(nil), m.Env...), harness.RefusalsReportEnv+"="+report, harness.RefusalsRunEnv+"="+cases)
	out, err := run(ctx, dir, timeout, argv, env)
	if err != nil {
		return nil, fmt.Errorf("baseline %s fails without a mutant (%s); fix the suite first:\n%s", strings.Join(m.Baseline, " "), err, lastLines(out, 30))
	}
	b, err := os.ReadFile(report)
	if errors.Is(err, os.ErrNotExist) && strings.Contains(out, harness.RefusalsRunEnv) {
		return nil, nil // the harness skipped: no case of these rules
	}
	if err != nil {
		return nil, fmt.Errorf("baseline %s: no refusals report (%w):\n%s", strings.Join(m.Baseline, " "), err, lastLines(out, 30))
	}
	var reports []refusalReport
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r refusalReport
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", report, l, err)
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// selectCases are the names of the baseline's cases that can judge m: named
// for its rule and refused (among others, maybe) by its validation block.
// The other cases of the rule are refused by other blocks only, which the
// mutant does not touch, so they pass with or without it.
func selectCases(m Mutant, reports []refusalReport) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range reports {
		if !m.CaseRe.MatchString(r.Case) || seen[r.Case] {
			continue
		}
		for _, v := range r.Rules {
			if v == m.Validation {
				out = append(out, r.Case)
				seen[r.Case] = true
				break
			}
		}
	}
	return out
}

// casesRe matches exactly the named cases.
func casesRe(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// prebuilt turns `go test FLAGS... PKG` into its test binary (built once
// per package into bins) run in the package's folder, as go test runs it.
func prebuilt(ctx context.Context, work string, test []string, bins map[string]string) (string, []string, error) {
	pkg := test[len(test)-1]
	bin, ok := bins[pkg]
	if !ok {
		bin = filepath.Join(work, ".mutate-bin", strings.NewReplacer("/", "_", ".", "_").Replace(pkg)+".test")
		if out, err := run(ctx, work, 30*time.Minute, []string{"go", "test", "-c", "-o", bin, pkg}, nil); err != nil {
			return "", nil, fmt.Errorf("building the tests of %s: %w\n%s", pkg, err, out)
		}
		bins[pkg] = bin
	}
	argv := []string{bin}
	for i := 2; i < len(test)-1; i++ { // go test ... PKG
		switch a := test[i]; a {
		case "-count=1":
		case "-v":
			argv = append(argv, "-test.v")
		case "-run":
			argv = append(argv, "-test.run", test[i+1])
			i++
		default:
			return "", nil, fmt.Errorf("prebuilt test: flag %s not handled", a)
		}
	}
	return filepath.Join(work, pkg), argv, nil
}

// judge decides a mutant's state from its test run.
func judge(m Mutant, out string, runErr error) string {
	switch {
	case errors.Is(runErr, errTimedOut):
		return timedOut
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return notJudged
	case runErr == nil:
		if strings.Contains(out, "testing: warning: no tests to run") || (m.Judge != nil && !ranJudgedTest(m, out)) {
			return notJudged // a filter that matched nothing proves nothing
		}
		return survived
	case m.Judge == nil:
		return killed
	}
	for _, l := range strings.Split(out, "\n") {
		if m.Judge.MatchString(l) {
			return killed
		}
	}
	return notJudged
}

// ranJudgedTest: the test the judge looks for ran (and passed).
func ranJudgedTest(m Mutant, out string) bool {
	pass := regexp.MustCompile(strings.Replace(m.Judge.String(), "--- FAIL: ", "--- PASS: ", 1))
	for _, l := range strings.Split(out, "\n") {
		if pass.MatchString(l) {
			return true
		}
	}
	return false
}

func report(results []result) int {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tMUTANT\tTIME\tCPU")
	count := map[string]int{}
	equivalent, below := 0, 0
	var wall, cpu time.Duration
	for _, r := range results {
		wall += r.Elapsed
		cpu += r.CPU
		state := r.State
		if r.Equivalent != "" {
			state += " (equivalent)"
			equivalent++
		} else if r.State != killed {
			below++
		}
		count[r.State]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f s\n", state, r.Name, r.Elapsed.Round(time.Second), r.CPU.Seconds())
	}
	tw.Flush()
	fmt.Printf("%d mutants: %s wall, %.0f s cpu in their test runs (%.1f s cpu a mutant; baselines and builds apart)\n",
		len(results), wall.Round(time.Second), cpu.Seconds(), cpu.Seconds()/float64(len(results)))
	fmt.Printf("killed %d of %d (goal: all); survived %d, timed out %d, not judged %d; %d listed as equivalent in %s\n",
		count[killed], len(results), count[survived], count[timedOut], count[notJudged], equivalent, allowlistFile)
	for _, r := range results {
		if r.State != killed && r.Equivalent == "" {
			fmt.Printf("\n--- %s: %s\n%s\n", strings.ToLower(r.State), r.Name, lastLines(r.Output, 15))
		}
	}
	for _, r := range results {
		if r.Equivalent != "" {
			fmt.Printf("equivalent: %s: %s\n", r.Name, r.Equivalent)
		}
	}
	return below
}

var errTimedOut = errors.New("timed out")

func run(ctx context.Context, dir string, timeout time.Duration, argv []string, env []string) (string, error) {
	out, _, err := runCPU(ctx, dir, timeout, argv, env)
	return out, err
}

// runCPU is run that also returns the CPU time (user + system) of the
// command and of the processes it waited for (terraform): comparable across
// a loaded machine, where wall time is not.
func runCPU(ctx context.Context, dir string, timeout time.Duration, argv []string, env []string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		return string(out), cpu, fmt.Errorf("%w after %s", errTimedOut, timeout)
	}
	return string(out), cpu, err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the files git knows (tracked, and untracked but not ignored).
func copyTree(root, dst string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			link, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			continue
		}
		if err := copyFile(src, target, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository root (run inside the dynops checkout): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// allowlistFile lists the surviving mutants that cannot change behaviour
// (equivalent mutants), one a line: `NAME | why`. NAME is a text mutant's
// name as printed, or `go FILE:LINE:COLUMN TYPE` for a gremlins mutant.
const allowlistFile = "test/tools/mutate/equivalent.txt"

type allowlist map[string]string

func readAllowlist(root string) (allowlist, error) {
	b, err := os.ReadFile(filepath.Join(root, allowlistFile))
	if errors.Is(err, os.ErrNotExist) {
		return allowlist{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := allowlist{}
	for n, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, why, ok := strings.Cut(l, " | ")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want `NAME | why the mutant cannot change behaviour`", allowlistFile, n+1)
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(why)
	}
	return out, nil
}

func (a allowlist) reason(name string) string { return a[name] }

// gremlinsReport is the part of gremlins' -o JSON output read here.
type gremlinsReport struct {
	Files []struct {
		Filename  string `json:"file_name"`
		Mutations []struct {
			Status string `json:"status"`
			Type   string `json:"type"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// goKillGoal is the goal for internal/: at least 80 % of the mutants
// that tests cover are killed.
const goKillGoal = 0.80

// goWrapper is put first in gremlins' PATH: `go test` exits 1 both when a
// test fails and when the mutant does not compile, and gremlins counts exit
// 1 as KILLED. The wrapper turns a build failure into exit 2, which gremlins
// counts as NOT VIABLE.
//
// gremlins v0.5.0 finds a mutant's package by looking for a folder whose
// path ends with the package's name; for a package named other than its
// folder (internal/cmd/export/import is package importcmd) it finds none and
// tests the module root instead, which has no Go files: every such mutant
// was NOT VIABLE, never judged. The wrapper tests the folder gremlins runs
// over (DYNOPS_MUTATE_DIR, an import path: gremlins runs go in the mutated
// package's folder of its copy) in place of the module root
// (DYNOPS_MUTATE_MODULE).
const goWrapper = `#!/bin/sh
if [ "$1" != test ]; then exec "$DYNOPS_REAL_GO" "$@"; fi
for a do
  shift
  if [ -n "$DYNOPS_MUTATE_MODULE" ] && [ "$a" = "$DYNOPS_MUTATE_MODULE" ]; then a=$DYNOPS_MUTATE_DIR; fi
  set -- "$@" "$a"
done
out=$(mktemp)
"$DYNOPS_REAL_GO" "$@" >"$out" 2>&1
rc=$?
cat "$out"
if [ $rc -ne 0 ] && grep -Eq '\[(build|setup) failed\]|^# ' "$out"; then rc=2; fi
rm -f "$out"
exit $rc
`

// gremlinsDirs expands the -packages patterns: ./internal/... is each top
// folder of internal/ (gremlins mutates a folder and its subfolders), and
// ./internal/X/... or ./internal/X is that folder.
func gremlinsDirs(root, patterns string) ([]string, error) {
	var dirs []string
	for _, p := range strings.Split(patterns, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		base := filepath.Clean(strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/..."))
		if base == "internal" {
			tops, err := filepath.Glob(filepath.Join(root, base, "*"))
			if err != nil {
				return nil, err
			}
			for _, top := range tops {
				if fi, err := os.Stat(top); err == nil && fi.IsDir() {
					rel, _ := filepath.Rel(root, top)
					dirs = append(dirs, rel)
				}
			}
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, base)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("-packages %s: %s is not a folder of the repository", p, base)
		}
		dirs = append(dirs, base)
	}
	return dirs, nil
}

// packagelessModule returns the module path of the repository at root when
// its top folder holds no Go package (so a `go test` of the module path can
// only be gremlins' fallback, see goWrapper), else "".
func packagelessModule(root string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading the module path: %w", err)
	}
	module := modfile.ModulePath(gomod)
	if module == "" {
		return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
	}
	gofiles, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil || len(gofiles) > 0 {
		return "", err
	}
	return module, nil
}

// runGremlins runs gremlins once per folder and prints the kill rate of each
// package; it returns 1 when internal/ as a whole is below the goal.
func runGremlins(ctx context.Context, root, pattern string, timeout time.Duration, workers, coefficient int, allow allowlist) (int, error) {
	bin := os.Getenv("GREMLINS")
	if bin == "" {
		return 0, errors.New("GREMLINS is not set: run through `make mutate`, which builds gremlins with scripts/setup.sh")
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		return 0, err
	}
	wrapDir, err := os.MkdirTemp("", "dynops-mutate-go-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(wrapDir)
	if err := os.WriteFile(filepath.Join(wrapDir, "go"), []byte(goWrapper), 0o755); err != nil {
		return 0, err
	}
	// -count=1: gremlins sets each mutant's timeout from its coverage run
	// (--timeout-coefficient times as long); a coverage run answered from
	// Go's test cache takes a second, and every mutant would time out.
	// -failfast: a mutant is judged by its first failing test; the tests
	// after it would each wait out their own deadline (testctx.Bounded)
	// under a mutant that makes runs wait, and add up to a timeout.
	env := []string{"DYNOPS_REAL_GO=" + realGo, "PATH=" + wrapDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1 -failfast")}
	dirs, err := gremlinsDirs(root, pattern)
	if err != nil {
		return 0, err
	}
	module, err := packagelessModule(root)
	if err != nil {
		return 0, err
	}
	type row struct {
		killed, lived, equivalent, notCovered, notViable, timedOut int
		elapsed                                                    time.Duration
	}
	rows := map[string]*row{}
	var failures, lived, equivalents, timedOutList []string
	for i, rel := range dirs {
		js := filepath.Join(wrapDir, fmt.Sprintf("gremlins-%d.json", i))
		start := time.Now()
		dirEnv := append(slices.Clip(env), "DYNOPS_MUTATE_MODULE="+module, "DYNOPS_MUTATE_DIR="+path.Join(module, filepath.ToSlash(rel))+"/...")
		runOut, runErr := run(ctx, root, 6*timeout, []string{bin, "unleash", "--workers", fmt.Sprint(workers), "--timeout-coefficient", fmt.Sprint(coefficient), "-o", js, "./" + rel}, dirEnv)
		took := time.Since(start)
		fmt.Fprintf(os.Stderr, "[%d/%d] gremlins ./%s (%s)\n", i+1, len(dirs), rel, took.Round(time.Second))
		b, readErr := os.ReadFile(js)
		var rep gremlinsReport
		if readErr == nil {
			readErr = json.Unmarshal(b, &rep)
		}
		if readErr != nil {
			msg := fmt.Sprintf("./%s: no gremlins report (%v): %s", rel, runErr, lastLines(runOut, 3))
			failures = append(failures, msg)
			continue
		}
		first := true
		for _, f := range rep.Files {
			// gremlins names files relative to the folder it ran in.
			file := filepath.Join(rel, f.Filename)
			pkg := "./" + filepath.Dir(file)
			r := rows[pkg]
			if r == nil {
				r = &row{}
				rows[pkg] = r
			}
			if first {
				r.elapsed += took // the folder's time, shown on its first package
				first = false
			}
			for _, m := range f.Mutations {
				switch m.Status {
				case "KILLED":
					r.killed++
				case "LIVED":
					name := fmt.Sprintf("go %s:%d:%d %s", file, m.Line, m.Column, m.Type)
					if why := allow.reason(name); why != "" {
						r.equivalent++
						equivalents = append(equivalents, name+": "+why)
						continue
					}
					r.lived++
					lived = append(lived, name)
				case "NOT COVERED":
					r.notCovered++
				case "NOT VIABLE":
					r.notViable++
				case "TIMED OUT":
					r.timedOut++
					timedOutList = append(timedOutList, fmt.Sprintf("go %s:%d:%d %s", file, m.Line, m.Column, m.Type))
				default:
					failures = append(failures, fmt.Sprintf("%s:%d: gremlins status %q", file, m.Line, m.Status))
				}
			}
		}
	}
	pkgs := make([]string, 0, len(rows))
	for p := range rows {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tKILLED\tLIVED\tEQUIVALENT\tNOT COVERED\tNOT VIABLE\tTIMED OUT\tKILL RATE\tTIME")
	var tk, tl, tt int
	for _, p := range pkgs {
		r := rows[p]
		rate := "-"
		if r.killed+r.lived > 0 {
			rate = fmt.Sprintf("%.0f %%", 100*float64(r.killed)/float64(r.killed+r.lived))
		}
		took := ""
		if r.elapsed > 0 {
			took = r.elapsed.Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", p, r.killed, r.lived, r.equivalent, r.notCovered, r.notViable, r.timedOut, rate, took)
		tk += r.killed
		tl += r.lived
		tt += r.timedOut
	}
	tw.Flush()
	fmt.Println("kill rate = killed / (killed + lived): equivalent mutants (" + allowlistFile + "), mutants no test covers, mutants that do not compile and timed-out runs are left out and counted apart")
	for _, l := range lived {
		fmt.Println("lived:", l)
	}
	for _, e := range equivalents {
		fmt.Println("equivalent:", e)
	}
	for _, m := range timedOutList {
		fmt.Println("timed out (not counted as killed):", m)
	}
	for _, f := range failures {
		fmt.Println("error:", f)
	}
	if tk+tl == 0 {
		return 1, errors.New("gremlins judged no mutant")
	}
	total := float64(tk) / float64(tk+tl)
	fmt.Printf("%s: killed %d of %d covered mutants: %.1f %% (goal ≥ %.0f %%); %d timed out\n", pattern, tk, tk+tl, 100*total, 100*goKillGoal, tt)
	if total < goKillGoal || len(failures) > 0 {
		return 1, nil
	}
	return 0, nil
}
