// Package citest tests modules/ci-test-role offline: the role GitHub Actions
// assumes for the suite against AWS trusts exactly one repository's jobs in
// one environment, and its policy changes only resources with the test
// prefix (DDB-SEC-01, DDB-SEC-03).
package citest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const example = "modules/ci-test-role/examples/github"

type statement struct {
	Sid       string                    `json:"Sid"`
	Effect    string                    `json:"Effect"`
	Action    any                       `json:"Action"`
	Resource  any                       `json:"Resource"`
	Condition map[string]map[string]any `json:"Condition"`
	Principal map[string]any            `json:"Principal"`
}

func list(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

func TestPlanCITestRole_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	opts := harness.PlanOptions(t, example, map[string]any{"github_repository": "hoge-inc/dynops"})
	opts.Logger = logger.Discard
	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	role := p.ResourcePlannedValuesMap["module.ci_test_role.aws_iam_role.this"]
	policy := p.ResourcePlannedValuesMap["module.ci_test_role.aws_iam_policy.suite"]
	require.NotNil(t, role)
	require.NotNil(t, policy)

	var trust struct{ Statement []statement }
	require.NoError(t, json.Unmarshal([]byte(role.AttributeValues["assume_role_policy"].(string)), &trust))
	require.Len(t, trust.Statement, 1)
	st := trust.Statement[0]
	assert.Equal(t, []string{"sts:AssumeRoleWithWebIdentity"}, list(st.Action))
	assert.Equal(t, []string{"arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"}, list(st.Principal["Federated"]))
	eq := st.Condition["StringEquals"]
	assert.Equal(t, []string{"repo:hoge-inc/dynops:environment:aws-sandbox"}, list(eq["token.actions.githubusercontent.com:sub"]), "one repository, one environment, exact")
	assert.Equal(t, []string{"sts.amazonaws.com"}, list(eq["token.actions.githubusercontent.com:aud"]))
	assert.NotContains(t, st.Condition, "StringLike", "no wildcard subject")
	assert.EqualValues(t, 7200, role.AttributeValues["max_session_duration"])

	doc := policy.AttributeValues["policy"].(string)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, []byte(doc)))
	assert.LessOrEqual(t, compact.Len(), 6144, "a managed policy holds at most 6,144 characters")
	var pol struct{ Statement []statement }
	require.NoError(t, json.Unmarshal([]byte(doc), &pol))
	denied := false
	for _, s := range pol.Statement {
		if s.Effect == "Deny" {
			denied = denied || strings.Contains(strings.Join(list(s.Resource), " "), ":role/dynops-ci-test")
			continue
		}
		for _, r := range list(s.Resource) {
			switch {
			case r == "*":
				// Unscoped statements: only list/describe calls, or scoped by a condition.
				for _, a := range list(s.Action) {
					verb := a[strings.Index(a, ":")+1:]
					scoped := len(s.Condition) > 0 || strings.HasPrefix(a, "application-autoscaling:")
					readOnly := strings.HasPrefix(verb, "List") || strings.HasPrefix(verb, "Describe") || strings.HasPrefix(verb, "Get") ||
						a == "cloudwatch:PutMetricData" || a == "backup:CreateBackupPlan"
					assert.True(t, scoped || readOnly, "%s: %s on * must be a read or carry a condition", s.Sid, a)
				}
			case s.Sid == "BackupPlansByID" && strings.Contains(r, ":backup-plan:"):
				// IDs, not names: no prefix to scope by (the statement holds no data-plane action).
			default:
				assert.Contains(t, r, "dev-t", "%s: %s is outside the test prefix (DDB-SEC-03)", s.Sid, r)
			}
		}
		for _, a := range list(s.Action) {
			assert.NotEqual(t, "iam:*", a, "%s: no iam:* allowed", s.Sid)
			if a == "iam:PassRole" {
				assert.Contains(t, s.Condition["StringEquals"], "iam:PassedToService", "PassRole only to named services")
			}
		}
	}
	assert.True(t, denied, "the role may never change itself")
}

func TestPlanCITestRoleValidations_DDB_SEC_01(t *testing.T) {
	base := func(over map[string]any) map[string]any {
		v := map[string]any{"github_repository": "hoge-inc/dynops", "account_id": "123456789012"}
		for k, x := range over {
			v[k] = x
		}
		return v
	}
	// One case per validation message of modules/ci-test-role (each names its rule and the fix).
	refusals := []harness.Refusal{
		{Name: "DDB-SEC-01 repository wildcard", Vars: base(map[string]any{"github_repository": "hoge-inc/*"}), Want: []string{"DDB-SEC-01: github_repository must be OWNER/NAME", "no wildcard"}},
		{Name: "DDB-SEC-01 repository without owner", Vars: base(map[string]any{"github_repository": "dynops"}), Want: []string{"DDB-SEC-01: github_repository must be OWNER/NAME", "the role trusts one repository"}},
		{Name: "DDB-SEC-01 environment wildcard", Vars: base(map[string]any{"github_environment": "*"}), Want: []string{"DDB-SEC-01: github_environment must be one environment name", "no wildcard"}},
		{Name: "DDB-SEC-03 account id", Vars: base(map[string]any{"account_id": "12345"}), Want: []string{"DDB-SEC-03: account_id must be the 12-digit", "sandbox account"}},
		{Name: "DDB-SEC-03 resource prefix too short", Vars: base(map[string]any{"resource_prefix": "d"}), Want: []string{"DDB-SEC-03: resource_prefix must be at least 3", "never reaches every resource"}},
		{Name: "DDB-SEC-03 resource prefix wildcard", Vars: base(map[string]any{"resource_prefix": "dev-*"}), Want: []string{"DDB-SEC-03: resource_prefix must be at least 3"}},
		{Name: "DDB-SEC-01 session too long", Vars: base(map[string]any{"max_session_duration": 86400}), Want: []string{"DDB-SEC-01: max_session_duration must be 3600 to 43200 seconds"}},
		{Name: "DDB-SEC-01 session too short", Vars: base(map[string]any{"max_session_duration": 60}), Want: []string{"DDB-SEC-01: max_session_duration must be 3600 to 43200 seconds"}},
	}
	harness.ExpectRefusals(t, "modules/ci-test-role", refusals)
}
