package table

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// Plan tests of the rules that span the table, the replica and the stack:
// the replica keeps the table's rules, LSI projections, every table input
// reachable from tables.yaml, misspelt keys, exceptions and errors naming
// their table. The capacity rules that need a live table are in TestDay2;
// the S3 backend's lockfile rule is test/modules/envs
// TestEnvRootsNeedTerraformForUseLockfile.

const replicaModule = "modules/dynamodb-table-replica"

const tableARN = "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-fuga-session"

func planReplica(t *testing.T, name string) map[string]any {
	t.Helper()
	p := plans.Plan(t, name)
	rc, ok := p.ResourcePlannedValuesMap["aws_dynamodb_table_replica.this"]
	require.True(t, ok, "plan has no aws_dynamodb_table_replica.this")
	return rc.AttributeValues
}

func TestPlanReplicaKeepsTheRules_DDB_PROT_01(t *testing.T) {
	t.Parallel()
	rep := planReplica(t, "replica keeps the rules")
	assert.Equal(t, true, rep["deletion_protection_enabled"], "DDB-PROT-01: every replica has deletion protection")
	assert.Equal(t, true, rep["point_in_time_recovery"], "DDB-PITR-01: every replica has PITR")
	tags := rep["tags"].(map[string]any)
	assert.Equal(t, "session", tags["usage"], "the replica carries the table's tags")
	assert.Equal(t, "legacy ttl", tags["dynops:exception:DDB-NAME-03"], "and its exceptions")
	assert.NotContains(t, tags, "dynops:key-schema")
}

func TestPlanReplicaPITROffFollowsTheTable_DDB_PITR_01(t *testing.T) {
	t.Parallel()
	rep := planReplica(t, "replica pitr off")
	assert.Equal(t, false, rep["point_in_time_recovery"])
}

func TestPlanReplicaProtectionOffWithReason_DDB_PROT_01(t *testing.T) {
	t.Parallel()
	rep := planReplica(t, "replica protection off")
	assert.Equal(t, false, rep["deletion_protection_enabled"])
	assert.Equal(t, "decommission OPS-9", rep["tags"].(map[string]any)["dynops:exception:DDB-PROT-01"], "the exception shows in the plan")
}

// TestPlanReplicaRefusals: what the replica module cannot enforce is refused.
func TestPlanReplicaRefusals(t *testing.T) {
	t.Parallel()
	var refusals []harness.Refusal
	for _, c := range []struct {
		name  string
		vars  map[string]any
		rule  string
		wants []string
	}{
		{"DDB-PITR-01 table PITR 7 days", map[string]any{"point_in_time_recovery": map[string]any{"recovery_period_in_days": 7}, "point_in_time_recovery_reason": "compliance: user data gone in 7 days"}, "DDB-PITR-01", []string{"table dev-fuga-session:", "7 days", "35 days", "DDB-PITR-01 exception allows"}},
		{"DDB-PITR-01 table PITR 1 day", map[string]any{"point_in_time_recovery": map[string]any{"recovery_period_in_days": 1}, "point_in_time_recovery_reason": "x1"}, "DDB-PITR-01", []string{"1 days", "modules/dr"}},
		{"deletion protection off without reason", map[string]any{"deletion_protection_enabled": false}, "DDB-PROT-01", []string{"dev-fuga-session", "deletion_protection_disabled_reason"}},
		{"deletion protection off, punctuation reason", map[string]any{"deletion_protection_enabled": false, "deletion_protection_disabled_reason": "--"}, "DDB-PROT-01", []string{"letters or digits"}},
		{"not a table ARN", map[string]any{"global_table_arn": "dev-fuga-session"}, "DDB-DR-01", []string{"module.TABLE.table_arn"}},
		{"table class", map[string]any{"table_class_override": "GLACIER"}, "DDB-CAP-02", []string{"STANDARD_INFREQUENT_ACCESS"}},
		// Global tables replicate through the table's stream (NEW_AND_OLD_IMAGES).
		{"table stream off", map[string]any{"table_stream_view_type": nil}, "DDB-DR-01", []string{"table dev-fuga-session:", "none (stream off)", `stream_view_type = "NEW_AND_OLD_IMAGES"`}},
		{"table stream NEW_IMAGE", map[string]any{"table_stream_view_type": "NEW_IMAGE"}, "DDB-DR-01", []string{"is NEW_IMAGE", "stream_enabled = true"}},
		{"table stream KEYS_ONLY", map[string]any{"table_stream_view_type": "KEYS_ONLY"}, "DDB-DR-01", []string{"is KEYS_ONLY", "pass its stream_view_type output"}},
		{"table_name of another table", map[string]any{"table_name": "dev-fuga-other"}, "DDB-DR-01", []string{"table dev-fuga-other:", "name different tables", "module.TABLE.table_name"}},
		{"table_name not a table name", map[string]any{"table_name": "a/b"}, "DDB-DR-01", []string{`table_name "a/b"`, "not a DynamoDB table name"}},
	} {
		vars := map[string]any{"table_name": "dev-fuga-session", "global_table_arn": tableARN, "table_stream_view_type": "NEW_AND_OLD_IMAGES"}
		for k, v := range c.vars {
			vars[k] = v
		}
		refusals = append(refusals, harness.Refusal{Name: c.rule + " " + c.name, Vars: vars, Want: append([]string{c.rule + ":"}, c.wants...)})
	}
	harness.ExpectRefusals(t, replicaModule, refusals)
}

// TestPlanReplicaOfNewTableRefusals: a replica of a table created in the same
// plan (its ARN known only after apply) is refused with the rule ID and the
// table's name, not Terraform's generic "known after apply", when it is given
// table_name (known at plan), as the example and envs/prod pass it. A real
// offline plan of a root holding the new table and its replica, one refusal
// per rule the replica checks and the table accepts.
func TestPlanReplicaOfNewTableRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, table, replica, rule string
		wants                      []string
	}{
		{"PITR period under 35 days", `point_in_time_recovery = { recovery_period_in_days = 7 }
  point_in_time_recovery_reason = "compliance: gone in 7 days"`, "",
			"DDB-PITR-01", []string{"table dev-neu0-session:", "7 days"}},
		{"stream NEW_IMAGE", `stream_view_type = "NEW_IMAGE"
  stream_view_type_reason = "consumers read new images only"`, "", "DDB-DR-01", []string{"table dev-neu1-session:", "is NEW_IMAGE"}},
		{"replica protection off with a placeholder", "", `deletion_protection_enabled = false
  deletion_protection_disabled_reason = "TODO adopt: say why"`, "DDB-PROT-01", []string{"replica of dev-neu2-session:", "placeholder"}},
	}
	// One root, one plan: each case is its own table (product neuN) and
	// replica, so each refusal names its own table; terraform reports the
	// refusals of independent modules together.
	var root strings.Builder
	root.WriteString(`provider "aws" {
  region = "eu-west-1"
}

provider "aws" {
  alias  = "eu_central_1"
  region = "eu-central-1"
}

provider "aws" {
  alias  = "us_west_2"
  region = "us-west-2"
}
`)
	for i, c := range cases {
		fmt.Fprintf(&root, `
module "table_%d" {
  source = "../.."

  env      = "dev"
  product  = "neu%d"
  usage    = "session"
  hash_key = "session_id"
  attributes = [{ name = "session_id", type = "S" }]

  contributor_insights_enabled = false
  %s
}

module "replica_%d" {
  source    = "../../../dynamodb-table-replica"
  providers = { aws = aws.eu_central_1 }

  table_name             = module.table_%d.table_name
  global_table_arn       = module.table_%d.table_arn
  point_in_time_recovery = module.table_%d.point_in_time_recovery
  table_tags             = module.table_%d.tags
  table_stream_view_type = module.table_%d.stream_view_type
  %s
}
`, i, i, c.table, i, i, i, i, i, i, c.replica)
	}
	opts := harness.PlanOptions(t, "modules/dynamodb-table/examples/global-table", nil)
	require.NoError(t, os.WriteFile(filepath.Join(opts.TerraformDir, "main.tf"), []byte(root.String()), 0o644))
	for _, f := range []string{"outputs.tf", "variables.tf"} {
		_ = os.Remove(filepath.Join(opts.TerraformDir, f))
	}
	diags := harness.PlanDiagnostics(t, opts)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			harness.RequireRefusal(t, diags, c.rule, c.wants...)
		})
	}
	for _, d := range diags {
		assert.NotContains(t, d.Message(), "known after apply", "every refusal uses values known at plan")
		assert.NotContains(t, d.Message(), "unknown", "every refusal uses values known at plan")
	}
}

// TestPlanReplicaOfNewTableRefusedReadably_DDB_PITR_01 (issue 43 #5): the
// replica module's own example, a table and its replica created in one plan,
// with the table's PITR period shorter than a replica's. Under the mock
// provider the table's ARN is unknown at plan, as on a first apply: the
// refusal must still be the rule naming the table, not terraform's "Invalid
// error message" (an error_message that read the name from the ARN).
// TestErrorMessagesAreKnownAtPlan (test/modules/conventions) keeps every
// module's messages so.
func TestPlanReplicaOfNewTableRefusedReadably_DDB_PITR_01(t *testing.T) {
	t.Parallel()
	harness.ExpectRefusals(t, "modules/dynamodb-table-replica/examples/two-region", []harness.Refusal{
		{Name: "DDB-PITR-01 new table with 7 days", Vars: map[string]any{
			"product":                       "neu",
			"point_in_time_recovery":        map[string]any{"recovery_period_in_days": 7},
			"point_in_time_recovery_reason": "compliance: user data gone in 7 days",
		}, Want: []string{"DDB-PITR-01: table dev-neu-session:", "its PITR period is 7 days", "Keep the table at 35 days"}},
	})
}

func TestPlanLSIProjectionAllWithApproval_DDB_IDX_02(t *testing.T) {
	t.Parallel()
	_, table := plan(t, "lsi projection all")
	lsis := table["local_secondary_index"].([]any)
	require.Len(t, lsis, 1)
	assert.Equal(t, "ALL", lsis[0].(map[string]any)["projection_type"])
	assert.Equal(t, "ARCH-7 strongly consistent reads of whole items", table["tags"].(map[string]any)["dynops:exception:DDB-IDX-02"], "Rego then accepts the plan")
}

// TestStackTakesEveryTableInput: every input of modules/dynamodb-table
// can be set in envs/tables.yaml (the stack's key list and its pass-through),
// except the ones the stack sets itself.
func TestStackTakesEveryTableInput(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(), p))
		require.NoError(t, err)
		return string(b)
	}
	var inputs []string
	for _, m := range regexp.MustCompile(`(?m)^variable "([a-z_]+)"`).FindAllStringSubmatch(read("modules/dynamodb-table/variables.tf"), -1) {
		inputs = append(inputs, m[1])
	}
	stackSets := []string{"env", "product", "usage", "allowed_envs", "replicas", "protected_envs"}
	tablesTF, mainTF := read("modules/dynamodb-stack/tables.tf"), read("modules/dynamodb-stack/main.tf")
	for _, in := range inputs {
		if slices.Contains(stackSets, in) {
			continue
		}
		assert.Contains(t, tablesTF, `"`+in+`"`, "tables.yaml key %s is not in the stack's key list (modules/dynamodb-stack/tables.tf)", in)
		assert.Regexp(t, `(?m)^\s+`+in+`\s+= .*each\.value\.`+in+`\b`, mainTF, "the stack does not pass %s from tables.yaml to the table module", in)
	}
}

const stack = "modules/dynamodb-stack"

func stackVars(tables map[string]any) map[string]any {
	return map[string]any{"env": "dev", "product": "hoge", "account_id": "123456789012", "tables": tables, "contributor_insights_enabled": false}
}

func user(extra map[string]any) map[string]any {
	u := map[string]any{"hash_key": "user_id", "attributes": []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}}}
	for k, v := range extra {
		u[k] = v
	}
	return u
}

// TestPlanStackRefusesUnknownKeys_DDB_EXC_01: a misspelt key anywhere in
// a tables.yaml entry fails, naming the table and the key, instead of the
// guideline default being used silently.
func TestPlanStackRefusesUnknownKeys_DDB_EXC_01(t *testing.T) {
	t.Parallel()
	d := stackRefusals.Expect(t)[unknownKeysCase]
	require.NotNil(t, d.Range, "the diagnostic points at the source")
}

const unknownKeysCase = "DDB-EXC-01 every unknown key named, with the keys it could be"

func unknownKeyRefusals() []harness.Refusal {
	tables := map[string]any{
		"user": user(map[string]any{"billing": "PROVISIONED", "global_secondary_indexes": []map[string]any{{"name": "gsi1", "hash_key": "email", "non_key_attribute": []string{"x"}}}}),
		"order": user(map[string]any{"point_in_time_recovery": map[string]any{"recovery_period": 7, "reason": "compliance"}, "autoscaling": map[string]any{"max": 3},
			"local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email", "projection": "ALL"}}}),
	}
	return []harness.Refusal{{Name: unknownKeysCase, Vars: stackVars(tables), Want: []string{"DDB-EXC-01:",
		`table "user": unknown key "billing"`,
		`table "user": unknown key "non_key_attribute" in global_secondary_indexes[0] (gsi1)`,
		`table "order": unknown key "recovery_period" in point_in_time_recovery`,
		`table "order": unknown key "max" in autoscaling`,
		// A key that moved says where it went.
		`unknown key "reason" in point_in_time_recovery (known keys: enabled, recovery_period_in_days); since v2.0.0 it is point_in_time_recovery_reason, beside point_in_time_recovery`,
		`table "order": unknown key "projection" in local_secondary_indexes[0] (lsi1)`,
		// Each names the keys it could have been (the fix), where it was found.
		`unknown key "billing" (known keys: hash_key, range_key, key_naming_reason, index_naming_reason, attributes,`,
		`billing_mode, provisioned_reason`,
		`in global_secondary_indexes[0] (gsi1) (known keys: name, hash_key, range_key, projection_type, non_key_attributes,`,
		`in point_in_time_recovery (known keys: enabled, recovery_period_in_days)`,
		`in autoscaling (known keys: enabled, max_capacity_ratio,`,
		`in local_secondary_indexes[0] (lsi1) (known keys: name, range_key, projection_type, non_key_attributes)`,
	}}}
}

// TestPlanStackExpressesEveryException: each approved exception can be
// written in tables.yaml with its reason and reaches the table's tags.
func TestPlanStackExpressesEveryException(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "stack exceptions")
	rc, ok := p.ResourcePlannedValuesMap[`module.table["user"].aws_dynamodb_table.this`]
	require.True(t, ok)
	tbl := rc.AttributeValues
	assert.Equal(t, "LegacyUsers", tbl["name"])
	everyExceptionChecks(t, tbl)
}

// everyException is a tables.yaml entry with every approved exception.
func everyException() map[string]any {
	return user(map[string]any{
		"range_key":    "email",
		"attributes":   []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}, {"name": "country", "type": "S"}},
		"billing_mode": "PROVISIONED", "provisioned_reason": "steady 2k WCU", "read_capacity": 5, "write_capacity": 5,
		"autoscaling": map[string]any{"enabled": false}, "autoscaling_disabled_reason": "fixed batch load",
		"local_secondary_indexes":  []map[string]any{{"name": "lsi1", "range_key": "country", "projection_type": "ALL"}},
		"global_secondary_indexes": []map[string]any{{"name": "gsi1", "hash_key": "country", "projection_type": "ALL"}},
		"allow_projection_all":     true, "projection_all_reason": "ARCH-42",
		"stream_view_type": "NEW_IMAGE", "stream_view_type_reason": "consumer needs new images only",
		"ttl_enabled": false, "ttl_reason": "items never expire",
		"deletion_protection_enabled": false, "deletion_protection_disabled_reason": "two-step delete OPS-5",
		"point_in_time_recovery": map[string]any{"recovery_period_in_days": 7}, "point_in_time_recovery_reason": "user data gone in 7 days",
		"name_override": "LegacyUsers", "name_override_reason": "legacy name OPS-77",
		"table_class": "STANDARD_INFREQUENT_ACCESS",
		"timeouts":    map[string]any{"update": "2h"},
	})
}

func everyExceptionChecks(t *testing.T, tbl map[string]any) {
	t.Helper()
	assert.Equal(t, "PROVISIONED", tbl["billing_mode"])
	assert.Equal(t, "NEW_IMAGE", tbl["stream_view_type"])
	assert.Equal(t, false, tbl["deletion_protection_enabled"])
	assert.Equal(t, "STANDARD_INFREQUENT_ACCESS", tbl["table_class"])
	assert.Len(t, tbl["local_secondary_index"], 1)
	tags := tbl["tags"].(map[string]any)
	for rule, reason := range map[string]string{
		"DDB-NAME-01": "legacy name OPS-77", "DDB-CAP-01": "provisioned: steady 2k WCU  no autoscaling: fixed batch load", // ";" cleaned from the tag
		"DDB-IDX-02": "ARCH-42", "DDB-STREAM-01": "consumer needs new images only", "DDB-NAME-03": "items never expire",
		"DDB-PROT-01": "two-step delete OPS-5", "DDB-PITR-01": "user data gone in 7 days",
	} {
		assert.Equal(t, reason, tags["dynops:exception:"+rule], rule)
	}
}

// TestPlanStackErrorsNameTheTable: a validation error from tables.yaml
// names the table and points at the source, not "line 0".
func TestPlanStackErrorsNameTheTable(t *testing.T) {
	t.Parallel()
	d := stackRefusals.Expect(t)[tableNamedCase]
	require.NotNil(t, d.Range)
	assert.NotZero(t, d.Range.Start.Line, "the diagnostic has a source line")
	assert.True(t, strings.HasSuffix(d.Range.Filename, ".tf"), "the diagnostic points at a file: %q", d.Range.Filename)
}

const tableNamedCase = "DDB-NAME-02 a GSI named after its key, in tables.yaml"

func tableNamedRefusals() []harness.Refusal {
	tables := map[string]any{"user": user(map[string]any{"global_secondary_indexes": []map[string]any{{"name": "email-index", "hash_key": "email", "projection_type": "KEYS_ONLY"}}})}
	return []harness.Refusal{{Name: tableNamedCase, Vars: stackVars(tables), Want: []string{"DDB-NAME-02:", "table dev-hoge-user:", "gsi1"}}}
}

// TestStackAccessKeysAreAccessInputs: the keys the stack's access input
// takes (modules/dynamodb-stack/access.tf access_keys, tenant_table_keys) are
// inputs of modules/dynamodb-access (and the attributes of its tenant_tables),
// each passed through, so the key check and the module cannot drift apart.
func TestStackAccessKeysAreAccessInputs(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(), p))
		require.NoError(t, err)
		return string(b)
	}
	accessTF, accessVars := read("modules/dynamodb-stack/access.tf"), read("modules/dynamodb-access/variables.tf")
	list := func(name string) []string {
		m := regexp.MustCompile(`(?m)^\s+` + name + `\s+= \[([^\]]*)\]`).FindStringSubmatch(accessTF)
		require.NotNil(t, m, "modules/dynamodb-stack/access.tf has no %s list", name)
		var out []string
		for _, q := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(m[1], -1) {
			out = append(out, q[1])
		}
		require.NotEmpty(t, out)
		return out
	}
	for _, k := range list("access_keys") {
		assert.Regexp(t, `(?m)^variable "`+k+`"`, accessVars, "access.%s is not an input of modules/dynamodb-access", k)
		assert.Regexp(t, `(?m)^\s+`+k+`\s+= .*local\.access\.`+k+`\b`, accessTF, "the stack does not pass access.%s to modules/dynamodb-access", k)
	}
	block := regexp.MustCompile(`(?s)variable "tenant_tables" \{.*?type = map\(object\(\{(.*?)\}\)\)`).FindStringSubmatch(accessVars)
	require.NotNil(t, block, "modules/dynamodb-access tenant_tables type")
	var attrs []string
	for _, m := range regexp.MustCompile(`(?m)^\s+([a-z_]+)\s+=`).FindAllStringSubmatch(block[1], -1) {
		attrs = append(attrs, m[1])
	}
	assert.ElementsMatch(t, attrs, list("tenant_table_keys"))
}
