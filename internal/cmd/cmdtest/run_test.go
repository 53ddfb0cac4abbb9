package cmdtest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
)

// TestRunMapsExitCodesAsTheBinary: Run goes through root, so a refusal is
// exit 2 with root's wording, help is exit 0, and the flags of Env are the
// global ones (an unknown --region would be refused before the command).
func TestRunMapsExitCodesAsTheBinary(t *testing.T) {
	r := cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "test") {
		t.Errorf("version: exit %d, stdout %q; want 0 and the version given to root", r.Code, r.Stdout)
	}
	r = cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "pitr", "restroe")
	if r.Code != 2 || !strings.Contains(r.Stderr, "Did you mean this?") || r.Stdout != "" {
		t.Errorf("a mistyped subcommand: exit %d, stdout %q, stderr %q; want 2 with root's suggestion on stderr", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "item", "get", "--table", "dev-a-b", "--key", `{"id": "u1"}`, "--jq", ".")
	if r.Code != 2 || !strings.Contains(r.Stderr, "add -o json") || r.Stdout != "" {
		t.Errorf("--jq without -o json: exit %d, stdout %q, stderr %q; want 2 saying to add -o json", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRunSetsVarsForTheRunOnly: Env.Vars are the run's environment (as the
// binary's would be) and are restored when the test ends.
func TestRunSetsVarsForTheRunOnly(t *testing.T) {
	const bad = "http://example.com:5000"
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Run("set", func(t *testing.T) {
		r := cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1", Vars: map[string]string{"AWS_ENDPOINT_URL": bad}}, "item", "get", "--table", "dev-a-b", "--key", `{"id": "u1"}`)
		if r.Code == 0 || !strings.Contains(r.Stderr, "AWS_ENDPOINT_URL "+bad+" is plain http") {
			t.Errorf("AWS_ENDPOINT_URL=%s: exit %d, stderr %q; want a refusal naming the variable", bad, r.Code, r.Stderr)
		}
	})
	if got := os.Getenv("AWS_ENDPOINT_URL"); got != "" {
		t.Errorf("AWS_ENDPOINT_URL is %q after the run's test; want it restored", got)
	}
}
