package policies_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/policies"
	"github.com/dynops/dynops/test/harness"
)

var ruleID = regexp.MustCompile(`^(DDB-[A-Z]+-[0-9]{2}): `)

func evaluator(t *testing.T) *policies.Evaluator {
	t.Helper()
	e, err := policies.New(context.Background())
	require.NoError(t, err)
	return e
}

// ids returns the rule IDs of the deny messages, failing for a message that
// does not start with one.
func ids(t *testing.T, msgs []string) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		id := ruleID.FindStringSubmatch(m)
		if !assert.NotNil(t, id, "deny message does not start with a rule ID: %s", m) {
			continue
		}
		if !slices.Contains(out, id[1]) {
			out = append(out, id[1])
		}
	}
	slices.Sort(out)
	return out
}

// TestFixtures: every guard rule has a bad fixture denied with its ID (and
// nothing else unless listed), and a fixture full of exceptions passes.
func TestFixtures(t *testing.T) {
	e := evaluator(t)
	also := map[string][]string{
		// dynamodb:* on * is also not scoped to an environment.
		"DDB-SEC-01": {"DDB-SEC-03"},
	}
	files, err := filepath.Glob("testdata/fixtures/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			msgs, err := e.Deny(context.Background(), b)
			require.NoError(t, err)
			for _, m := range msgs {
				t.Log(m)
			}
			var want []string
			if rule, ok := strings.CutPrefix(name, "bad-"); ok {
				want = append([]string{rule}, also[rule]...)
				slices.Sort(want)
			}
			assert.Equal(t, want, ids(t, msgs))
		})
	}
}

// TestEveryGuardRuleHasABadFixture: the rules in the Rego files and the bad
// fixtures name the same IDs.
func TestEveryGuardRuleHasABadFixture(t *testing.T) {
	var inRego []string
	regos, err := filepath.Glob("*.rego")
	require.NoError(t, err)
	quoted := regexp.MustCompile(`"(DDB-[A-Z]+-[0-9]{2}): `)
	// conftest reads a rule named exception as its own exception mechanism.
	conftestReserved := regexp.MustCompile(`(?m)^exception\b`)
	for _, f := range regos {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.False(t, conftestReserved.Match(b), "%s defines a rule named exception, which conftest reserves", f)
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(inRego, m[1]) {
				inRego = append(inRego, m[1])
			}
		}
	}
	var fixtures []string
	bad, err := filepath.Glob("testdata/fixtures/bad-*.json")
	require.NoError(t, err)
	for _, f := range bad {
		fixtures = append(fixtures, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "bad-"), ".json"))
	}
	slices.Sort(inRego)
	slices.Sort(fixtures)
	assert.Equal(t, inRego, fixtures)
	t.Logf("%d guard rules: %s", len(inRego), strings.Join(inRego, " "))
}

// TestUnscopedActionsAgree: the actions DDB-SEC-03 lets through on "*" are
// the ones internal/permissions puts on "*" for the operator role.
func TestUnscopedActionsAgree(t *testing.T) {
	var want []string
	for _, a := range permissions.Unscoped() {
		if strings.HasPrefix(a, "dynamodb:") {
			want = append(want, a)
		}
	}
	b, err := os.ReadFile("data.json")
	require.NoError(t, err)
	var data struct {
		Guideline struct {
			Unscoped []string `json:"unscoped_dynamodb_actions"`
		} `json:"guideline"`
	}
	require.NoError(t, json.Unmarshal(b, &data))
	got := data.Guideline.Unscoped
	slices.Sort(want)
	slices.Sort(got)
	assert.Equal(t, want, got)
}

// plan returns `terraform show -json` of an offline plan of the root at dir.
func plan(t *testing.T, dir string, vars map[string]any) []byte {
	t.Helper()
	opts := harness.PlanOptions(t, dir, vars)
	opts.Logger = logger.Discard // the deny messages are the output
	return []byte(terraform.InitAndPlanAndShow(t, opts))
}

// roots lists every env root and every module example (directories with .tf files).
func roots(t *testing.T) []string {
	t.Helper()
	repo := harness.RepoRoot()
	var out []string
	for _, pattern := range []string{"envs/*", "modules/*/examples/*"} {
		dirs, err := filepath.Glob(filepath.Join(repo, pattern))
		require.NoError(t, err)
		for _, d := range dirs {
			if tfs, _ := filepath.Glob(filepath.Join(d, "*.tf")); len(tfs) > 0 {
				rel, err := filepath.Rel(repo, d)
				require.NoError(t, err)
				out = append(out, filepath.ToSlash(rel))
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// network is an env's application VPC for the DynamoDB endpoint (DDB-SEC-05).
var network = map[string]any{"vpc_id": "vpc-0123456789abcdef0", "route_table_ids": []string{"rtb-0123456789abcdef0"}}

// TestRootsPass: every env root and example plans clean under every rule.
func TestRootsPass(t *testing.T) {
	e := evaluator(t)
	for _, dir := range roots(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			var vars map[string]any
			switch {
			case dir == "envs/local":
				vars = map[string]any{"endpoint": "http://127.0.0.1:1"}
			case dir == "envs/prod":
				vars = map[string]any{"account_id": "123456789012", "failover_trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}, "network": network}
			case strings.HasPrefix(dir, "envs/"):
				// The access policies need the account ID (no STS call at plan time);
				// the VPC endpoint the network (DDB-SEC-05).
				vars = map[string]any{"account_id": "123456789012", "network": network}
			case dir == "modules/dr/examples/two-region":
				vars = map[string]any{"account_id": "123456789012"}
			case dir == "modules/stream-consumer/examples/go-consumer":
				vars = map[string]any{"filename": harness.PlanZip(t)}
			case dir == "modules/dynamodb-export/examples/scheduled":
				vars = map[string]any{"scheduler_zip_path": harness.PlanZip(t)}
			}
			planJSON := plan(t, dir, vars)
			var p struct {
				ResourceChanges []struct {
					Type string `json:"type"`
				} `json:"resource_changes"`
			}
			require.NoError(t, json.Unmarshal(planJSON, &p))
			tables := 0
			for _, rc := range p.ResourceChanges {
				if rc.Type == "aws_dynamodb_table" {
					tables++
				}
			}
			require.Positive(t, len(p.ResourceChanges), "%s: the plan is empty; nothing would be checked", dir)
			msgs, err := e.Deny(context.Background(), planJSON)
			require.NoError(t, err)
			assert.Empty(t, msgs, "%s must pass every guard rule", dir)
			t.Logf("%s: %d resources, %d tables, no deny", dir, len(p.ResourceChanges), tables)
		})
	}
}

// TestBadEnvDenied is the expected-deny stage of `make policy`: the bad env
// (raw resources that bypass the modules) is denied with the rule IDs.
func TestBadEnvDenied(t *testing.T) {
	e := evaluator(t)
	msgs, err := e.Deny(context.Background(), plan(t, "policies/testdata/bad-env", nil))
	require.NoError(t, err)
	t.Logf("policies/testdata/bad-env: %d denies", len(msgs))
	for _, m := range msgs {
		t.Log("  deny: " + m)
	}
	assert.Equal(t, []string{"DDB-NAME-02", "DDB-PITR-01", "DDB-SEC-01", "DDB-SEC-03"}, ids(t, msgs))
}
