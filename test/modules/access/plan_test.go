// Package access tests modules/dynamodb-access offline: the planned policies
// and their validations, and tenant isolation (DDB-SEC-02) proven by a real
// IAM policy evaluator over the policies in the plan.
package access

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/test/helpers/harness"
)

const (
	example   = "modules/dynamodb-access/examples/complete"
	module    = "modules/dynamodb-access"
	accountID = "123456789012"
	// healthCheckID is the env's Route 53 health check the example gives the operator.
	healthCheckID = "abcdef12-3456-7890-abcd-ef1234567890"
	// fisTemplateID is the env's FIS template (modules/dr's pause drill) the example gives the operator.
	fisTemplateID = "EXTpause1234"
	region        = harness.DefaultRegion
)

// Policy is an IAM policy document.
type Policy struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one IAM statement; Action and Resource are always lists here.
type Statement struct {
	Sid       string         `json:"Sid"`
	Effect    string         `json:"Effect"`
	Principal map[string]any `json:"Principal,omitempty"`
	Action    []string       `json:"Action"`
	NotAction []string       `json:"NotAction,omitempty"`
	Resource  []string       `json:"Resource,omitempty"`
	Condition map[string]any `json:"Condition,omitempty"`
}

// planned is what the plan of the example holds, per role.
type planned struct {
	policies map[string]string // role -> policy JSON as planned
	trust    map[string]string // role -> trust policy JSON as planned
	boundary map[string]any    // role -> permissions_boundary
}

// planExample plans the complete example offline and returns the planned
// policy and trust documents, exactly as terraform would send them to IAM.
// The case is "example" (no inputs) or "example with boundary" of plans.
func planExample(t *testing.T, name string) planned {
	t.Helper()
	p := plans.Plan(t, name)
	out := planned{policies: map[string]string{}, trust: map[string]string{}, boundary: map[string]any{}}
	for addr, r := range p.ResourcePlannedValuesMap {
		role := between(addr, `["`, `"]`)
		switch {
		case strings.HasPrefix(addr, "module.access.aws_iam_policy.this["):
			out.policies[role] = r.AttributeValues["policy"].(string)
		case strings.HasPrefix(addr, "module.access.aws_iam_role.this["):
			out.trust[role] = r.AttributeValues["assume_role_policy"].(string)
			out.boundary[role] = r.AttributeValues["permissions_boundary"]
		}
	}
	return out
}

func between(s, open, close string) string {
	_, rest, _ := strings.Cut(s, open)
	in, _, _ := strings.Cut(rest, close)
	return in
}

func decode(t *testing.T, doc string) Policy {
	t.Helper()
	var p Policy
	require.NoError(t, json.Unmarshal([]byte(doc), &p), "policy JSON: %s", doc)
	return p
}

func TestPlanExample(t *testing.T) {
	t.Parallel()
	boundary := exampleBoundary
	got := planExample(t, "example with boundary")

	roles := []string{"application", "data-patch", "dynops-operator", "dynops-break-glass", "investigator", "tenant"}
	require.ElementsMatch(t, roles, keys(got.policies), "one policy per role")
	require.ElementsMatch(t, roles, keys(got.trust), "one role per policy with create_roles = true")

	t.Run("DDB-SEC-03 every resource is scoped to the env", func(t *testing.T) {
		prefix := fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/dev-", region, accountID)
		// The operator fails tables over between regions (dynops dr): any region, same env prefix.
		operatorPrefix := fmt.Sprintf("arn:aws:dynamodb:*:%s:table/dev-", accountID)
		for role, doc := range got.policies {
			for _, s := range decode(t, doc).Statement {
				if s.Effect == "Deny" {
					continue // a Deny cannot widen the reach
				}
				for _, r := range s.Resource {
					switch {
					case r == "*":
						for _, a := range s.Action {
							assert.Equal(t, "*", permissions.Scope(a), "%s: %s on * but IAM can scope it", role, a)
						}
					case strings.HasPrefix(r, "arn:aws:dynamodb:"):
						ok := strings.HasPrefix(r, prefix) || (strings.HasPrefix(role, "dynops-") && strings.HasPrefix(r, operatorPrefix))
						assert.True(t, ok, "%s: resource %s is not under %s", role, r, prefix)
					case strings.HasPrefix(role, "dynops-"):
						// Other services: named by the env prefix, except Route 53 health checks (exactly the env's IDs) and Security Hub (account-scoped).
						ok := strings.Contains(r, "dev-") || r == "arn:aws:route53:::healthcheck/"+healthCheckID ||
							// dr drill --pause-replication: exactly the env's template, and the experiments templates run.
							r == "arn:aws:fis:*:"+accountID+":experiment-template/"+fisTemplateID || r == "arn:aws:fis:*:"+accountID+":experiment/*" ||
							strings.Contains(r, ":event-source-mapping:") || strings.Contains(r, ":recovery-point:") || strings.Contains(r, "/aws-dynamodb/imports") ||
							// check --to-security-hub: the account's one hub and its own product (no env in either).
							r == "arn:aws:securityhub:"+region+":"+accountID+":hub/default" || r == "arn:aws:securityhub:"+region+":"+accountID+":product/"+accountID+"/default"
						assert.True(t, ok, "%s: resource %s is not scoped to the env", role, r)
					default:
						t.Errorf("%s: unexpected non-DynamoDB resource %s", role, r)
					}
				}
			}
		}
	})
	t.Run("DDB-SEC-01 investigator reads, data-patch writes only Put/Update", func(t *testing.T) {
		inv := decode(t, got.policies["investigator"])
		require.Len(t, inv.Statement, 2)
		assert.ElementsMatch(t, []string{"dynamodb:GetItem", "dynamodb:Query"}, inv.Statement[0].Action)
		dp := decode(t, got.policies["data-patch"])
		require.Len(t, dp.Statement, 2)
		assert.ElementsMatch(t, []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"}, dp.Statement[0].Action)
	})
	t.Run("DDB-SEC-01 every policy ends with a Deny of everything outside its documented set", func(t *testing.T) {
		for role, doc := range got.policies {
			sts := decode(t, doc).Statement
			last := sts[len(sts)-1]
			assert.Equal(t, "Deny", last.Effect, role)
			assert.Equal(t, "DenyOutsideDocumentedSet", last.Sid, role)
			var allowed []string
			for _, s := range sts {
				if s.Effect == "Allow" {
					allowed = append(allowed, s.Action...)
				}
			}
			for _, a := range allowed {
				assert.Contains(t, last.NotAction, a, "%s allows %s outside its cap", role, a)
			}
		}
	})
	t.Run("DDB-SEC-01 protection switches only in the break-glass role, with MFA", func(t *testing.T) {
		for _, a := range permissions.BreakGlass() {
			assert.NotContains(t, got.policies["dynops-operator"], `"`+a+`"`, "the operator holds %s", a)
			assert.Contains(t, got.policies["dynops-break-glass"], `"`+a+`"`)
		}
		assert.Contains(t, got.policies["dynops-break-glass"], `"BoolIfExists":{"aws:MultiFactorAuthPresent":"false"}`)
		assert.Contains(t, got.trust["dynops-break-glass"], `"Bool":{"aws:MultiFactorAuthPresent":"true"}`)
	})
	t.Run("DDB-SEC-03 S3 tied to the account, PutMetricData to its namespace", func(t *testing.T) {
		for _, s := range decode(t, got.policies["dynops-operator"]).Statement {
			for _, a := range s.Action {
				switch {
				case strings.HasPrefix(a, "s3:"):
					assert.Equal(t, map[string]any{"StringEquals": map[string]any{"aws:ResourceAccount": accountID}}, s.Condition, "%s: %s", s.Sid, a)
				case a == "cloudwatch:PutMetricData":
					assert.Equal(t, map[string]any{"StringEquals": map[string]any{"cloudwatch:namespace": "dynops/Export"}}, s.Condition, s.Sid)
				}
			}
		}
	})
	t.Run("DDB-SEC-01 application has no Scan and no wildcard", func(t *testing.T) {
		for _, s := range decode(t, got.policies["application"]).Statement {
			assert.NotContains(t, s.Action, "dynamodb:Scan")
			for _, a := range s.Action {
				assert.NotContains(t, a, "*")
			}
		}
	})
	t.Run("dynops-operator is exactly operator-actions.json", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(), permissions.JSONFile))
		require.NoError(t, err)
		var doc permissions.Document
		require.NoError(t, json.Unmarshal(b, &doc))
		var want, have []string
		for _, s := range doc.Statements {
			want = append(want, s.Actions...)
		}
		for _, s := range decode(t, got.policies["dynops-operator"]).Statement {
			if s.Effect == "Allow" {
				have = append(have, s.Action...)
			}
		}
		assert.ElementsMatch(t, want, have, "the operator's allows")
		bg := decode(t, got.policies["dynops-break-glass"]).Statement
		for _, s := range doc.BreakGlass {
			var in []string
			for _, st := range bg {
				if st.Effect == "Allow" {
					in = append(in, st.Action...)
				}
			}
			assert.Subset(t, in, s.Actions)
		}
	})
	t.Run("DDB-SEC-02 tenant trust requires the tag at TagSession", func(t *testing.T) {
		trust := decode(t, got.trust["tenant"])
		require.Len(t, trust.Statement, 1)
		assert.ElementsMatch(t, []string{"sts:AssumeRole", "sts:TagSession"}, trust.Statement[0].Action)
		assert.Contains(t, got.trust["tenant"], `"aws:RequestTag/tenant_id":"false"`)
	})
	t.Run("permissions boundary on every role", func(t *testing.T) {
		for role, b := range got.boundary {
			assert.Equal(t, boundary, b, role)
		}
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPlanValidations: bad inputs fail the plan with the rule ID and the fix.
func TestPlanValidations(t *testing.T) {
	t.Parallel()
	base := func() map[string]any {
		return map[string]any{"env": "dev", "product": "hoge", "account_id": accountID}
	}
	cases := []struct {
		name string
		vars map[string]any
		want string
	}{
		{"DDB-SEC-03 application table of another env", map[string]any{"application_tables": []string{"prod-hoge-user"}}, "DDB-SEC-03: every application_tables entry must be a table of this env"},
		{"DDB-SEC-03 tenant table of another env", map[string]any{"tenant_tables": map[string]any{"stg-hoge-order": map[string]any{}}}, "DDB-SEC-03: every tenant_tables key"},
		{"DDB-SEC-03 account id", map[string]any{"account_id": "12345"}, "DDB-SEC-03: account_id must be the 12-digit"},
		{"DDB-SEC-02 wildcard in key prefix", map[string]any{"tenant_tables": map[string]any{"dev-hoge-order": map[string]any{"key_prefix": "TENANT*"}}}, "DDB-SEC-02: key_prefix must not contain"},
		{"DDB-SEC-02 cross-tenant index without a reason", map[string]any{"tenant_tables": map[string]any{"dev-hoge-order": map[string]any{"cross_tenant_indexes": map[string]any{"gsi3": " "}}}}, "DDB-SEC-02: cross_tenant_indexes must map GSI names"},
		{"DDB-SEC-03 health check wildcard", map[string]any{"health_check_ids": []string{"*"}}, "DDB-SEC-03: health_check_ids must be Route 53 health check IDs"},
		{"DDB-SEC-01 roles without principals", map[string]any{"create_roles": true}, "DDB-SEC-01: create_roles = true needs trusted_principal_arns"},
		{"DDB-SEC-01 roles without the policies they attach", map[string]any{"create_roles": true, "create_policies": false, "trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/app"}},
			"DDB-SEC-01: create_roles = true attaches the policies this module creates"},
		{"DDB-SEC-01 one principal trusted by the tenant and the data-patch role", map[string]any{"create_roles": true, "tenant_tables": map[string]any{"dev-hoge-order": map[string]any{}},
			"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/app"}, "role_trusted_principal_arns": map[string]any{"tenant": []string{"arn:aws:iam::123456789012:role/app"}}},
			"DDB-SEC-01: arn:aws:iam::123456789012:role/app is trusted by both the tenant role and the data-patch role"},
		{"DDB-SEC-01 one principal trusted by the tenant and the operator role", map[string]any{"create_roles": true, "tenant_tables": map[string]any{"dev-hoge-order": map[string]any{}},
			"role_trusted_principal_arns": map[string]any{"tenant": []string{"arn:aws:iam::123456789012:role/t", "arn:aws:iam::123456789012:role/x"}, "application": []string{"arn:aws:iam::123456789012:role/app"},
				"investigator": []string{"arn:aws:iam::123456789012:role/app"}, "data-patch": []string{"arn:aws:iam::123456789012:role/app"},
				"dynops-operator": []string{"arn:aws:iam::123456789012:role/x"}, "dynops-break-glass": []string{"arn:aws:iam::123456789012:role/app"}}},
			"DDB-SEC-01: arn:aws:iam::123456789012:role/x is trusted by both the tenant role and the dynops-operator role"},
		{"DDB-SEC-01 tenant role never trusts the shared list", map[string]any{"create_roles": true, "tenant_tables": map[string]any{"dev-hoge-order": map[string]any{}},
			"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/app"}},
			"DDB-SEC-01: the tenant role trusts no principal: set role_trusted_principal_arns[\"tenant\"] (the tenant role never trusts trusted_principal_arns)"},
		{"DDB-SEC-01 account root without a reason", map[string]any{"create_roles": true, "trusted_principal_arns": []string{"arn:aws:iam::123456789012:root"}},
			"DDB-SEC-01: arn:aws:iam::123456789012:root is an account root"},
		{"DDB-SEC-01 account root of the tenant role without a reason", map[string]any{"create_roles": true, "tenant_tables": map[string]any{"dev-hoge-order": map[string]any{}},
			"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/app"}, "role_trusted_principal_arns": map[string]any{"tenant": []string{"arn:aws:iam::210987654321:root"}}},
			"DDB-SEC-01: arn:aws:iam::210987654321:root is an account root"},
		{"DDB-SEC-01 bare account id as principal", map[string]any{"role_trusted_principal_arns": map[string]any{"tenant": []string{"123456789012"}}}, "DDB-SEC-01: role_trusted_principal_arns values must be IAM ARNs"},
		{"DDB-SEC-01 trust list of an unknown role", map[string]any{"role_trusted_principal_arns": map[string]any{"operator": []string{"arn:aws:iam::123456789012:role/x"}}}, "DDB-SEC-01: role_trusted_principal_arns keys must be role names"},
		{"DDB-SEC-01 empty root reason", map[string]any{"account_root_trust_reason": " "}, "DDB-SEC-01: account_root_trust_reason must say why"},
		{"DDB-SEC-03 env not lower case", map[string]any{"env": "Dev"}, "DDB-SEC-03: env must be lower case letters and digits (e.g. \"prod\"); it is the table name prefix the policies are scoped to"},
		{"DDB-NAME-01 product not lower case words", map[string]any{"product": "Hoge_App"}, "DDB-NAME-01: product must be lower case words joined by '-' (e.g. \"hoge\")"},
		{"DDB-SEC-02 tenant tag key with a space", map[string]any{"tenant_tag_key": "tenant id"}, "DDB-SEC-02: tenant_tag_key must be a valid IAM tag key (letters, digits, _ . : / = + @ -), e.g. \"tenant_id\""},
		{"DDB-SEC-01 principal that is not an IAM ARN", map[string]any{"trusted_principal_arns": []string{"*"}}, "DDB-SEC-01: trusted_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME, user/NAME or root)"},
		{"DDB-SEC-01 boundary that is not a policy ARN", map[string]any{"permissions_boundary_arn": "arn:aws:iam::123456789012:role/x"}, "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null"},
		{"DDB-SEC-01 session longer than IAM allows", map[string]any{"max_session_duration": 86400}, "DDB-SEC-01: max_session_duration must be between 3600 and 43200 seconds (1 to 12 hours"},
		{"DDB-SEC-01 session shorter than IAM allows", map[string]any{"max_session_duration": 900}, "DDB-SEC-01: max_session_duration must be between 3600 and 43200 seconds"},
	}
	// DDB-SEC-02: every delimiter a tag value can hold (letters, digits, space,
	// _ . : / = + - @) or that IAM reads as a wildcard/variable is refused.
	for _, d := range []string{"x", "Z", "7", " ", "_", ".", ":", "/", "=", "+", "-", "@", "*", "?", "$", "##", "é"} {
		cases = append(cases, struct {
			name string
			vars map[string]any
			want string
		}{"DDB-SEC-02 delimiter " + strconv.Quote(d), map[string]any{"tenant_tables": map[string]any{"dev-hoge-order": map[string]any{"index_key_delimiter": d}}}, "DDB-SEC-02: index_key_delimiter must be one character a tag value cannot hold"})
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, tc := range cases {
		vars := base()
		for k, v := range tc.vars {
			vars[k] = v
		}
		refusals = append(refusals, harness.Refusal{Name: tc.name, Vars: vars, Want: []string{tc.want}})
	}
	harness.ExpectRefusals(t, module, refusals)
}

// TestIndexKeyInjectionRefused_DDB_SEC_02: dynamodb:LeadingKeys bounds only
// the partition key a request names, so on a multi-tenant table (tag
// dynops:tenant-key) a GSI keyed by another attribute is refused at plan time
// unless marked cross-tenant with a reason.
func TestIndexKeyInjectionRefused_DDB_SEC_02(t *testing.T) {
	t.Parallel()
	const table = "DDB-SEC-02: table dev-hoge-order: on a multi-tenant table (tag dynops:tenant-key)"
	fix := []string{table, "the tenant key must be the table's hash_key and every GSI's hash_key", `"dynops:cross-tenant:<gsi>" = "<reason>"`, "cross_tenant_indexes"}
	var refusals []harness.Refusal
	for _, tc := range indexKeyCases {
		if !tc.refused {
			continue
		}
		refusals = append(refusals, harness.Refusal{Name: "DDB-SEC-02 " + tc.name, Vars: tc.vars(), Want: fix})
	}
	require.Len(t, refusals, 5, "the refused cases of indexKeyCases")
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		harness.ExpectRefusals(t, "modules/dynamodb-table", refusals)
	})
	for _, tc := range indexKeyCases {
		if tc.refused {
			continue
		}
		t.Run("accepted "+tc.name, func(t *testing.T) {
			t.Parallel()
			p := plans.Plan(t, "table "+tc.name)
			r, ok := p.ResourcePlannedValuesMap["aws_dynamodb_table.this"]
			require.True(t, ok, "the table is planned")
			got := map[string]string{}
			for _, g := range r.AttributeValues["global_secondary_index"].([]any) {
				g := g.(map[string]any)
				got[g["name"].(string)] = g["hash_key"].(string)
			}
			want := map[string]string{}
			for _, g := range tc.gsis {
				want[g["name"].(string)] = g["hash_key"].(string)
			}
			assert.Equal(t, want, got, "the GSIs are planned as given")
			assert.Equal(t, "tenant_key", r.AttributeValues["tags"].(map[string]any)["dynops:tenant-key"])
		})
	}
}

// indexKeyCase is one table of TestIndexKeyInjectionRefused_DDB_SEC_02.
type indexKeyCase struct {
	name    string
	hash    string
	gsis    []map[string]any
	tags    map[string]string
	refused bool
}

func indexKeyGSI(name, hash string) map[string]any {
	return map[string]any{"name": name, "hash_key": hash, "range_key": "order_key", "projection_type": "KEYS_ONLY"}
}

var indexKeyCases = []indexKeyCase{
	{"composite tenant_status GSI key", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "tenant_status")}, map[string]string{"dynops:tenant-key": "tenant_key"}, true},
	{"second GSI keyed by status", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "tenant_key"), indexKeyGSI("gsi2", "status")}, map[string]string{"dynops:tenant-key": "tenant_key"}, true},
	{"cross-tenant tag without a reason", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "status")}, map[string]string{"dynops:tenant-key": "tenant_key", "dynops:cross-tenant:gsi1": " "}, true},
	{"cross-tenant tag for another index", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "status")}, map[string]string{"dynops:tenant-key": "tenant_key", "dynops:cross-tenant:gsi2": "reporting"}, true},
	{"tenant key is not the hash key", "order_key", []map[string]any{indexKeyGSI("gsi1", "tenant_key")}, map[string]string{"dynops:tenant-key": "tenant_key"}, true},
	{"every GSI keyed by the tenant key", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "tenant_key"), indexKeyGSI("gsi2", "tenant_key")}, map[string]string{"dynops:tenant-key": "tenant_key"}, false},
	{"cross-tenant GSI with its reason", "tenant_key", []map[string]any{indexKeyGSI("gsi1", "tenant_key"), indexKeyGSI("gsi2", "status")}, map[string]string{"dynops:tenant-key": "tenant_key", "dynops:cross-tenant:gsi2": "operations: open orders of every tenant"}, false},
}

// indexKeyPlanCases are the accepted tables of indexKeyCases, planned with
// the package's plan group as "table <name>".
func indexKeyPlanCases() []harness.PlanCase {
	var out []harness.PlanCase
	for _, tc := range indexKeyCases {
		if !tc.refused {
			out = append(out, harness.PlanCase{Name: "table " + tc.name, Dir: "modules/dynamodb-table", Vars: func(testing.TB) map[string]any { return tc.vars() }})
		}
	}
	return out
}

// vars are the table module's variables of the case.
func (tc indexKeyCase) vars() map[string]any {
	rangeKey := "order_key"
	if tc.hash == "order_key" {
		rangeKey = "tenant_key"
	}
	// Only indexed attributes may be declared.
	attrs := []map[string]any{{"name": "tenant_key", "type": "S"}, {"name": "order_key", "type": "S"}}
	for _, g := range tc.gsis {
		if h := g["hash_key"].(string); h != "tenant_key" && h != "order_key" && !slices.ContainsFunc(attrs, func(a map[string]any) bool { return a["name"] == h }) {
			attrs = append(attrs, map[string]any{"name": h, "type": "S"})
		}
	}
	return map[string]any{
		"env": "dev", "product": "hoge", "usage": "order", "hash_key": tc.hash, "range_key": rangeKey,
		"attributes": attrs, "global_secondary_indexes": tc.gsis, "tags": tc.tags,
	}
}
