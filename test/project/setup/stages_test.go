package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stagesRun runs scripts/test-stages.sh STAGES from a copy of scripts/ with
// make and go replaced by stand-ins on PATH (make prints the stage and the
// DYNOPS_SETUP_TOOLS it got; go install writes a tool), and the tool cache
// at tools. It returns what it printed.
func stagesRun(t *testing.T, tools string, stages ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"test-stages.sh", "setup.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "scripts", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bin")
	stand := map[string]string{
		"make": "#!/usr/bin/env bash\necho \"stage ${@: -1} DYNOPS_SETUP_TOOLS=${DYNOPS_SETUP_TOOLS:-all}\"\n",
		"go":   "#!/usr/bin/env bash\n[ \"$1\" = install ] || exit 1\nmkdir -p \"$GOBIN\" && printf '#!/bin/sh\\n' >\"$GOBIN/tool\" && chmod +x \"$GOBIN/tool\"\n",
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range stand {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(dir, "scripts", "test-stages.sh"))
	cmd.Args = append(cmd.Args, stages...)
	// The environment without the setup's own switches: a cold `make test`
	// runs this test with DYNOPS_SETUP_TOOLS=test set for its stages.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNOPS_SETUP_TOOLS=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DYNOPS_TOOLS_DIR="+tools)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test-stages.sh %s: %v\n%s", strings.Join(stages, " "), err, out)
	}
	return string(out)
}

var stageLine = regexp.MustCompile(`(?m)^stage (\S+) DYNOPS_SETUP_TOOLS=(\S+)$`)

func order(out string) []string {
	var got []string
	for _, m := range stageLine.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+"("+m[2]+")")
	}
	return got
}

// TestColdRunBuildsLintToolsBehindTheTests: on a new machine (no lint tools
// in the cache) make test's setup leaves them out (DYNOPS_SETUP_TOOLS=test),
// they build in the background, and lint runs last with the whole setup;
// once they are built, the next run keeps the stages in the order given.
func TestColdRunBuildsLintToolsBehindTheTests(t *testing.T) {
	tools := t.TempDir()
	stages := []string{"setup", "lint", "policy", "test-go"}
	out := stagesRun(t, tools, stages...)
	want := "setup(test) policy(test) test-go(test) lint(all)"
	if got := strings.Join(order(out), " "); got != want {
		t.Errorf("cold run: stages %s, want %s\n%s", got, want, out)
	}
	if !strings.Contains(out, "== lint tools (background") || !strings.Contains(out, "exit 0") {
		t.Errorf("cold run: no line for the background build of the lint tools:\n%s", out)
	}
	for _, name := range []string{"tflint", "tflint-ruleset-aws", "terraform-docs", "actionlint"} {
		if m, _ := filepath.Glob(filepath.Join(tools, name+"-v*", name)); len(m) != 1 {
			t.Errorf("cold run: %s not built in the background", name)
		}
	}
	out = stagesRun(t, tools, stages...)
	want = "setup(all) lint(all) policy(all) test-go(all)"
	if got := strings.Join(order(out), " "); got != want || strings.Contains(out, "background") {
		t.Errorf("warm run: stages %s, want %s, nothing in the background\n%s", got, want, out)
	}
}
