// Package iamsim runs IAM requests through a real policy evaluator,
// @cloud-copilot/iam-simulate (a test-only tool, AGPL, installed by
// scripts/setup.sh into the tool cache and never shipped), for the suites
// that check what the modules' roles can and cannot do.
package iamsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// Decisions of the evaluator (its overallResult).
const (
	Allowed  = "Allowed"
	Implicit = "ImplicitlyDenied"
	Explicit = "ExplicitlyDenied"
)

// Simulation is the input of iam-simulate's runSimulation.
type Simulation struct {
	IdentityPolicies        []NamedPolicy `json:"identityPolicies"`
	ServiceControlPolicies  []any         `json:"serviceControlPolicies"`
	ResourceControlPolicies []any         `json:"resourceControlPolicies"`
	PermissionBoundaries    []NamedPolicy `json:"permissionBoundaryPolicies,omitempty"`
	ResourcePolicy          any           `json:"resourcePolicy,omitempty"`
	Request                 Request       `json:"request"`
}

// NamedPolicy is one policy document and its name.
type NamedPolicy struct {
	Name   string `json:"name"`
	Policy any    `json:"policy"`
}

// Request is who asks for which action on which resource, with what context.
type Request struct {
	Principal        string         `json:"principal"`
	Action           string         `json:"action"`
	Resource         Resource       `json:"resource"`
	ContextVariables map[string]any `json:"contextVariables"`
}

// Resource is the resource ARN and its account.
type Resource struct {
	Resource  string `json:"resource"`
	AccountID string `json:"accountId"`
}

// Result is the evaluator's decision.
type Result struct {
	OverallResult string `json:"overallResult"`
	Errors        string `json:"errors"`
}

// Dir is the folder holding node_modules/@cloud-copilot/iam-simulate; it
// fails t when setup has not installed it.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("IAM_SIMULATE_DIR")
	if dir == "" {
		dir = filepath.Join(harness.ToolsDir(), "iam-simulate")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cloud-copilot", "iam-simulate")); err != nil {
		t.Fatalf("@cloud-copilot/iam-simulate is not installed in %s: run `make setup` (scripts/setup.sh needs node and npm)", dir)
	}
	return dir
}

// Node runs one of this package's scripts (simulate.cjs, actions.cjs) with in
// on stdin and returns its stdout.
func Node(t testing.TB, script string, in []byte) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(filepath.Dir(file), script))
	cmd.Env = append(os.Environ(), "IAM_SIMULATE_DIR="+Dir(t))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node %s: %s", script, stderr.String())
	return out
}

// Run evaluates every simulation in one node process, results in order.
func Run(t testing.TB, sims []Simulation) []Result {
	t.Helper()
	for i := range sims {
		if sims[i].Request.ContextVariables == nil {
			sims[i].Request.ContextVariables = map[string]any{}
		}
	}
	in, err := json.Marshal(sims)
	require.NoError(t, err)
	var results []Result
	require.NoError(t, json.Unmarshal(Node(t, "simulate.cjs", in), &results))
	require.Len(t, results, len(sims))
	return results
}

// Denied, as a Probe's Want, accepts either kind of deny.
const Denied = "Denied"

// Probe is one request of a report and the decision it must get (Allowed,
// Implicit, Explicit or Denied); Context holds the request's context keys.
type Probe struct {
	Name, Action, Resource, Want string
	Context                      map[string]any
}

// Expect evaluates sims (sims[i] asks probes[i]) in one node process,
// asserts each decision and logs them as a table titled title, so a report
// reads the same in every suite.
func Expect(t *testing.T, title string, sims []Simulation, probes []Probe) {
	t.Helper()
	require.Len(t, sims, len(probes))
	results := Run(t, sims)
	var b strings.Builder
	fmt.Fprintf(&b, "IAM evaluator: %s (%d requests)\n", title, len(probes))
	for i, p := range probes {
		got := results[i].OverallResult
		ok := got == p.Want || (p.Want == Denied && (got == Implicit || got == Explicit))
		mark := ""
		if !ok {
			mark = "  WRONG, want " + p.Want
		}
		fmt.Fprintf(&b, "  %-17s %s%s\n", got, p.Name, mark)
		assert.True(t, ok, "%s: %s on %s: got %s, want %s (errors: %s)", p.Name, p.Action, p.Resource, got, p.Want, results[i].Errors)
	}
	t.Log("\n" + b.String())
}
