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
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	var (
		kinds   = flag.String("kind", "rego,tf,go", "which mutants: rego, tf, go (comma-separated)")
		only    = flag.String("only", "", "regexp: only mutants whose name matches")
		list    = flag.Bool("list", false, "list the mutants and run nothing")
		timeout = flag.Duration("timeout", 10*time.Minute, "longest test run for one mutant")
		pkgs    = flag.String("packages", "./internal/...", "go: package pattern for gremlins")
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
			n, err := runTextMutants(ctx, root, ms, *timeout)
			if err != nil {
				fail(err)
			}
			survivors += n
		case "go":
			if *list {
				fmt.Println("go: gremlins over", *pkgs)
				continue
			}
			n, err := runGremlins(ctx, root, *pkgs, *timeout)
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
				Test:     []string{"go", "test", "-count=1", "-run", "^(TestFixtures|TestEveryGuardRuleHasABadFixture|TestEveryDenyRuleHasAFixture)$", "./policies/"},
			})
		}
	}
	return out, nil
}

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

// moduleTests maps a module to the Go package whose validation tests cover it.
var moduleTests = map[string]string{
	"dynamodb-table":         "./test/table/",
	"dynamodb-alarms":        "./test/alarms/",
	"stream-consumer":        "./test/streamconsumer/",
	"dynamodb-export":        "./test/export/",
	"dynamodb-access":        "./test/access/",
	"dr":                     "./test/dr/",
	"dynamodb-stack":         "./test/envs/",
	"ci-test-role":           "./test/citest/",
	"alarm-topic":            "./test/alarms/",
	"dynamodb-vpc-endpoint":  "./test/security/",
	"cloudtrail-data-events": "./test/security/",
}

var (
	validationBlock = regexp.MustCompile(`(?s)validation\s*\{\s*condition\s*=\s*(.*?)\n\s*error_message\s*=\s*("(?:[^"\\]|\\.)*")`)
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
		pkg, ok := moduleTests[module]
		if !ok {
			return nil, fmt.Errorf("%s: no test package known for module %s: add it to moduleTests in test/mutate", rel, module)
		}
		for _, m := range validationBlock.FindAllStringSubmatchIndex(src, -1) {
			cond := src[m[2]:m[3]]
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
			test := []string{"go", "test", "-count=1", "-run", "Validation[s]?/^" + regexp.QuoteMeta(id) + "[ _]", pkg}
			where := fmt.Sprintf("%s:%d var.%s %s", rel, line, variable, id)
			out = append(out,
				Mutant{
					Name:     "tf " + where + " guard removed",
					File:     rel,
					Original: src,
					Mutated:  src[:m[2]] + "true" + src[m[3]:],
					Test:     test,
				},
				Mutant{
					Name:     "tf " + where + " fix text removed",
					File:     rel,
					Original: src,
					Mutated:  src[:m[4]] + fmt.Sprintf("%q", id+": invalid "+variable+".") + src[m[5]:],
					Test:     test,
				})
			_ = cond
		}
	}
	return out, nil
}

type result struct {
	Mutant
	Killed  bool
	Elapsed time.Duration
	Output  string
}

// runTextMutants runs each mutant in a copy of the repository and prints a
// table; it returns how many survived.
func runTextMutants(ctx context.Context, root string, ms []Mutant, timeout time.Duration) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	work, err := os.MkdirTemp("", "dynops-mutate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	if err := copyTree(root, work); err != nil {
		return 0, fmt.Errorf("copying the repository: %w", err)
	}
	var results []result
	for i, m := range ms {
		path := filepath.Join(work, m.File)
		if err := os.WriteFile(path, []byte(m.Mutated), 0o644); err != nil {
			return 0, err
		}
		start := time.Now()
		out, runErr := run(ctx, work, timeout, m.Test)
		if err := os.WriteFile(path, []byte(m.Original), 0o644); err != nil {
			return 0, err
		}
		r := result{Mutant: m, Killed: runErr != nil, Elapsed: time.Since(start), Output: out}
		if r.Killed && noTestsRan(out) {
			r.Killed = false // a filter that matched nothing proves nothing
		}
		results = append(results, r)
		state := "killed"
		if !r.Killed {
			state = "SURVIVED"
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %-8s %s (%s)\n", i+1, len(ms), state, m.Name, r.Elapsed.Round(time.Second))
	}
	return report(results), nil
}

// noTestsRan: go test with a -run filter that matches nothing passes; a
// build failure fails. Either way the mutant was not judged by a test.
func noTestsRan(out string) bool {
	return strings.Contains(out, "[build failed]") || strings.Contains(out, "testing: warning: no tests to run")
}

func report(results []result) int {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tMUTANT\tTIME")
	survived := 0
	for _, r := range results {
		state := "killed"
		if !r.Killed {
			state = "SURVIVED"
			survived++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", state, r.Name, r.Elapsed.Round(time.Second))
	}
	tw.Flush()
	fmt.Printf("killed %d of %d (goal: all)\n", len(results)-survived, len(results))
	for _, r := range results {
		if !r.Killed {
			fmt.Printf("\n--- survived: %s\n%s\n", r.Name, lastLines(r.Output, 15))
		}
	}
	return survived
}

func run(ctx context.Context, dir string, timeout time.Duration, argv []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("timed out after %s", timeout)
	}
	return string(out), err
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

// gremlinsReport is the part of gremlins' -o JSON output read here.
type gremlinsReport struct {
	Files []struct {
		Filename  string `json:"file_name"`
		Mutations []struct {
			Status string `json:"status"`
			Type   string `json:"type"`
			Line   int    `json:"line"`
		} `json:"mutations"`
	} `json:"files"`
}

// goKillGoal is the goal for internal/: at least 80 % of the mutants
// that tests cover are killed.
const goKillGoal = 0.80

// runGremlins runs gremlins once per top folder of internal/ (it mutates a
// folder and its subfolders, and runs their tests) and prints the kill rate
// of each package; it returns 1 when internal/ as a whole is below the goal.
func runGremlins(ctx context.Context, root, pattern string, timeout time.Duration) (int, error) {
	bin := os.Getenv("GREMLINS")
	if bin == "" {
		return 0, errors.New("GREMLINS is not set: run through `make mutate`, which builds gremlins with scripts/setup.sh")
	}
	base := strings.TrimSuffix(strings.TrimPrefix(pattern, "./"), "/...")
	tops, err := filepath.Glob(filepath.Join(root, base, "*"))
	if err != nil {
		return 0, err
	}
	type row struct {
		killed, lived, notCovered, other int
	}
	rows := map[string]*row{}
	var failures []string
	for i, top := range tops {
		if fi, err := os.Stat(top); err != nil || !fi.IsDir() {
			continue
		}
		rel, _ := filepath.Rel(root, top)
		js := filepath.Join(os.TempDir(), fmt.Sprintf("dynops-gremlins-%d.json", i))
		start := time.Now()
		runOut, runErr := run(ctx, root, 6*timeout, []string{bin, "unleash", "--workers", "1", "--timeout-coefficient", "4", "-o", js, "./" + rel})
		fmt.Fprintf(os.Stderr, "[%d/%d] gremlins ./%s (%s)\n", i+1, len(tops), rel, time.Since(start).Round(time.Second))
		b, readErr := os.ReadFile(js)
		os.Remove(js)
		var rep gremlinsReport
		if readErr == nil {
			readErr = json.Unmarshal(b, &rep)
		}
		if readErr != nil {
			msg := fmt.Sprintf("./%s: no gremlins report (%v): %s", rel, runErr, lastLines(runOut, 3))
			failures = append(failures, msg)
			continue
		}
		for _, f := range rep.Files {
			pkg := "./" + filepath.Join(rel, filepath.Dir(f.Filename))
			r := rows[pkg]
			if r == nil {
				r = &row{}
				rows[pkg] = r
			}
			for _, m := range f.Mutations {
				switch m.Status {
				case "KILLED":
					r.killed++
				case "LIVED":
					r.lived++
				case "NOT COVERED":
					r.notCovered++
				default: // TIMED OUT, NOT VIABLE
					r.other++
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
	fmt.Fprintln(tw, "PACKAGE\tKILLED\tLIVED\tNOT COVERED\tTIMED OUT/NOT VIABLE\tKILL RATE")
	var tk, tl int
	for _, p := range pkgs {
		r := rows[p]
		rate := "-"
		if r.killed+r.lived > 0 {
			rate = fmt.Sprintf("%.0f %%", 100*float64(r.killed)/float64(r.killed+r.lived))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", p, r.killed, r.lived, r.notCovered, r.other, rate)
		tk += r.killed
		tl += r.lived
	}
	tw.Flush()
	for _, f := range failures {
		fmt.Println("error:", f)
	}
	if tk+tl == 0 {
		return 1, errors.New("gremlins judged no mutant")
	}
	total := float64(tk) / float64(tk+tl)
	fmt.Printf("internal/: killed %d of %d covered mutants: %.1f %% (goal ≥ %.0f %%)\n", tk, tk+tl, 100*total, 100*goKillGoal)
	if total < goKillGoal || len(failures) > 0 {
		return 1, nil
	}
	return 0, nil
}
