package table

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/test/helpers/harness"
)

// stackRefusals are the refusal matrices of the stack's tests, run together
// (harness.RefusalGroup: one init, one set of terraform test processes).
var stackRefusals = harness.NewRefusalGroup(stack,
	harness.RefusalSet{Test: "TestPlanStackValidations", Cases: stackValidationRefusals},
	harness.RefusalSet{Test: "TestPlanStackRefusesUnknownKeys_DDB_EXC_01", Cases: unknownKeyRefusals},
	harness.RefusalSet{Test: "TestPlanStackErrorsNameTheTable", Cases: tableNamedRefusals},
)

// TestPlanStackValidations: every validation message of modules/dynamodb-stack
// (the envs' tables.yaml entry point), each with its rule and its fix, in the
// diagnostic's own summary and detail (not terraform's echo of the inputs).
func TestPlanStackValidations(t *testing.T) {
	t.Parallel()
	stackRefusals.Expect(t)
}

func stackValidationRefusals() []harness.Refusal {
	ok := map[string]any{"user": user(nil)}
	with := func(over map[string]any) map[string]any {
		v := stackVars(ok)
		for k, x := range over {
			v[k] = x
		}
		return v
	}
	return []harness.Refusal{
		{Name: "DDB-NAME-01 no table", Vars: with(map[string]any{"tables": map[string]any{}}),
			Want: []string{"DDB-NAME-01: tables (envs/tables.yaml) must map each usage", "with at least one table"}},
		{Name: "DDB-NAME-01 entry not a map", Vars: with(map[string]any{"tables": map[string]any{"user": "user_id"}}),
			Want: []string{"DDB-NAME-01: tables (envs/tables.yaml) must map each usage (e.g. \"user\") to its settings"}},
		{Name: "DDB-EXC-01 misspelt key", Vars: with(map[string]any{"tables": map[string]any{"user": user(map[string]any{"billing": "PROVISIONED"})}}),
			Want: []string{`DDB-EXC-01: envs/tables.yaml: table "user": unknown key "billing"`, "Every setting must be one modules/dynamodb-table knows", "docs/tables-yaml.md"}},
		{Name: "DDB-NAME-01 envs not a list", Vars: with(map[string]any{"tables": map[string]any{"user": user(map[string]any{"envs": "prod"})}}),
			Want: []string{`DDB-NAME-01: envs/tables.yaml: table "user": envs must be a non-empty list of env names (e.g. envs: [prod])`}},
		{Name: "DDB-NAME-01 envs empty", Vars: with(map[string]any{"tables": map[string]any{"user": user(map[string]any{"envs": []string{}})}}),
			Want: []string{`DDB-NAME-01: envs/tables.yaml: table "user": envs must be a non-empty list of env names`}},
		{Name: "DDB-NAME-01 envs not env names", Vars: with(map[string]any{"tables": map[string]any{"user": user(map[string]any{"envs": []string{"Prod "}})}}),
			Want: []string{`DDB-NAME-01: envs/tables.yaml: table "user": envs must be a non-empty list of env names`}},
		{Name: "DDB-SEC-02 tenant table not in tables", Vars: with(map[string]any{"access": map[string]any{"account_id": "123456789012", "tenant_tables": map[string]any{"order": map[string]any{}}}}),
			Want: []string{"DDB-SEC-02: access.tenant_tables must be keyed by usages listed in tables", `(e.g. "order")`}},
		{Name: "DDB-SEC-02 access key misspelt, not dropped", Vars: with(map[string]any{"access": map[string]any{"account_id": "123456789012", "permissions_boundary": "arn:aws:iam::123456789012:policy/b", "tenant_tables": map[string]any{"user": map[string]any{"cross_tenant_index": map[string]any{"gsi1": "reporting"}}}}}),
			Want: []string{`DDB-SEC-02: access: unknown key "permissions_boundary" (known keys: account_id, tenant_tables,`, "permissions_boundary_arn", `unknown key "cross_tenant_index" in tenant_tables.user (known keys: key_prefix, index_key_delimiter, cross_tenant_indexes)`, "set in the env root's main.tf"}},
		{Name: "DDB-SEC-03 access without account id", Vars: with(map[string]any{"access": map[string]any{"tenant_tables": map[string]any{}}}),
			Want: []string{"DDB-SEC-03: access.account_id is required"}},
		{Name: "DDB-SEC-04 account id not 12 digits", Vars: with(map[string]any{"account_id": "1234"}),
			Want: []string{"DDB-SEC-04: account_id must be the 12-digit AWS account ID of the env", `"123456789012"`}},
		{Name: "DDB-SEC-04 no account for the alarm topic key", Vars: with(map[string]any{"account_id": nil}),
			Want: []string{"DDB-SEC-04: the stack's alarm topic is encrypted with a customer managed key whose policy names the account", "set account_id (or access.account_id), or pass alarm_sns_topic_arn"}},
	}
}

// envScopeTables are three entries: one without `envs`, one in prod only,
// one in dev and prod (TestPlanStackEnvScope plans them in dev).
func envScopeTables() map[string]any {
	entry := func(envs []string) map[string]any {
		e := map[string]any{"hash_key": "user_id", "attributes": []map[string]any{{"name": "user_id", "type": "S"}}}
		if envs != nil {
			e["envs"] = envs
		}
		return e
	}
	return map[string]any{"user": entry(nil), "legacy": entry([]string{"prod"}), "order": entry([]string{"dev", "prod"})}
}

// TestPlanStackEnvScope: an entry with `envs` plans only in those envs (a
// table adopted in prod does not plan a new table in dev); without `envs` an
// entry is in every env, as before.
func TestPlanStackEnvScope(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "stack env scope")
	for usage, want := range map[string]bool{"user": true, "legacy": false, "order": true} {
		_, planned := p.ResourceChangesMap[`module.table["`+usage+`"].aws_dynamodb_table.this`]
		assert.Equal(t, want, planned, "table %s planned in dev", usage)
	}
	for addr := range p.ResourceChangesMap {
		assert.False(t, strings.Contains(addr, `"legacy"`), "nothing of the prod-only table plans in dev: %s", addr)
	}
}
