package table

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const module = "modules/dynamodb-table"

// baseVars is a minimal compliant call of the module.
func baseVars() map[string]any {
	return map[string]any{
		"env":      "dev",
		"product":  "fuga",
		"usage":    "user",
		"hash_key": "user_id",
		"attributes": []map[string]any{
			{"name": "user_id", "type": "S"},
			{"name": "email", "type": "S"},
		},
		"global_secondary_indexes": []map[string]any{
			{"name": "gsi1", "hash_key": "email", "non_key_attributes": []string{"status"}},
		},
	}
}

func with(overrides map[string]any) map[string]any {
	v := baseVars()
	for k, val := range overrides {
		v[k] = val
	}
	return v
}

// plans are the package's offline plans that must succeed, planned together
// in one terraform run (harness.PlanGroup); each test reads its own case.
var plans = harness.NewPlanGroup(
	harness.PlanCase{Name: "defaults", Dir: module, Vars: func(testing.TB) map[string]any { return baseVars() }},
	harness.PlanCase{Name: "customer managed key", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"kms_key_arn": tableKey})
	}},
	harness.PlanCase{Name: "exceptions", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"point_in_time_recovery": map[string]any{"recovery_period_in_days": 7}, "point_in_time_recovery_reason": "compliance: user data gone in 7 days",
			"global_secondary_indexes": []map[string]any{
				{"name": "gsi1", "hash_key": "email", "projection_type": "ALL"},
			},
			"allow_projection_all":  true,
			"projection_all_reason": "ARCH-42 reporting index",
		})
	}},
	harness.PlanCase{Name: "pitr opt-out", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"point_in_time_recovery": map[string]any{"enabled": false}, "point_in_time_recovery_reason": "work table rebuilt nightly",
		})
	}},
	harness.PlanCase{Name: "lsi projection all", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"range_key":                "email",
			"global_secondary_indexes": []map[string]any{},
			"local_secondary_indexes":  []map[string]any{{"name": "lsi1", "range_key": "email", "projection_type": "ALL"}},
			"allow_projection_all":     true,
			"projection_all_reason":    "ARCH-7 strongly consistent reads of whole items",
		})
	}},
	harness.PlanCase{Name: "replica keeps the rules", Dir: replicaModule, Vars: func(testing.TB) map[string]any {
		return map[string]any{
			"table_name":             "dev-fuga-session",
			"global_table_arn":       tableARN,
			"table_stream_view_type": "NEW_AND_OLD_IMAGES",
			"table_tags":             map[string]any{"env": "dev", "usage": "session", "dynops:key-schema": "hash=session_id range=-", "dynops:exception:DDB-NAME-03": "legacy ttl"},
		}
	}},
	harness.PlanCase{Name: "replica pitr off", Dir: replicaModule, Vars: func(testing.TB) map[string]any {
		return map[string]any{
			"table_name":             "dev-fuga-session",
			"global_table_arn":       tableARN,
			"table_stream_view_type": "NEW_AND_OLD_IMAGES",
			"point_in_time_recovery": map[string]any{"enabled": false},
		}
	}},
	harness.PlanCase{Name: "replica protection off", Dir: replicaModule, Vars: func(testing.TB) map[string]any {
		return map[string]any{
			"table_name":                          "dev-fuga-session",
			"global_table_arn":                    tableARN,
			"table_stream_view_type":              "NEW_AND_OLD_IMAGES",
			"deletion_protection_enabled":         false,
			"deletion_protection_disabled_reason": "decommission OPS-9",
		}
	}},
	harness.PlanCase{Name: "prod capped", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"env": "prod", "on_demand_throughput": map[string]any{"max_read_request_units": 4000, "max_write_request_units": 1000}})
	}},
	harness.PlanCase{Name: "prod uncapped with reason", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"env": "prod", "on_demand_throughput_reason": "launch week, traffic unknown: OPS-12"})
	}},
	harness.PlanCase{Name: "prod capped stack", Dir: stack, Vars: func(testing.TB) map[string]any {
		v := stackVars(map[string]any{"user": user(map[string]any{"on_demand_throughput": map[string]any{"max_read_request_units": 4000, "max_write_request_units": 1000},
			"global_secondary_indexes": []map[string]any{{"name": "gsi1", "hash_key": "email", "projection_type": "KEYS_ONLY"}}})})
		v["env"] = "prod"
		return v
	}},
	harness.PlanCase{Name: "stack exceptions", Dir: stack, Vars: func(testing.TB) map[string]any {
		return stackVars(map[string]any{"user": everyException()})
	}},
	// TestPlanStackAddingATableAddsOnlyItsResources
	harness.PlanCase{Name: "stack tables.yaml", Dir: stack, Vars: func(t testing.TB) map[string]any { return stackVars(envTables(t)) }},
	harness.PlanCase{Name: "stack tables.yaml + invoice", Dir: stack, Vars: func(t testing.TB) map[string]any { return stackVars(withInvoice(t)) }},
	// TestPlanStackEnvScope, TestPlanStackDeniesCrossTenantIndexesWithoutTag
	harness.PlanCase{Name: "stack env scope", Dir: stack, Vars: func(testing.TB) map[string]any { return stackVars(envScopeTables()) }},
	harness.PlanCase{Name: "stack cross-tenant", Dir: stack, Vars: func(testing.TB) map[string]any { return crossTenantVars() }},
)

// tableKey is the customer managed key of the "customer managed key" case.
const tableKey = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

// plan returns the case's plan (from plans) and its planned table.
func plan(t *testing.T, name string) (*terraform.PlanStruct, map[string]any) {
	t.Helper()
	return plannedTable(t, plans.Plan(t, name))
}

// plannedTable returns the table planned in p.
func plannedTable(t *testing.T, p *terraform.PlanStruct) (*terraform.PlanStruct, map[string]any) {
	t.Helper()
	rc, ok := p.ResourcePlannedValuesMap["aws_dynamodb_table.this"]
	require.True(t, ok, "plan has no aws_dynamodb_table.this")
	return p, rc.AttributeValues
}

func block(t *testing.T, table map[string]any, name string) map[string]any {
	t.Helper()
	list, ok := table[name].([]any)
	require.True(t, ok && len(list) == 1, "expected one %s block, got %v", name, table[name])
	return list[0].(map[string]any)
}

func TestPlanDefaults(t *testing.T) {
	t.Parallel()
	p, table := plan(t, "defaults")

	t.Run("DDB-NAME-01 name is env-product-usage", func(t *testing.T) {
		assert.Equal(t, "dev-fuga-user", table["name"])
	})
	t.Run("DDB-CAP-01 on-demand", func(t *testing.T) {
		assert.Equal(t, "PAY_PER_REQUEST", table["billing_mode"])
		for addr := range p.ResourcePlannedValuesMap {
			assert.NotContains(t, addr, "aws_appautoscaling", "on-demand tables need no auto scaling")
		}
	})
	t.Run("DDB-CAP-02 table class STANDARD", func(t *testing.T) {
		// The provider leaves the planned table_class unknown for the default
		// class; the module's default is what decides it (the case sets none).
		require.NotContains(t, baseVars(), "table_class")
		v := p.RawPlan.Config.RootModule.Variables["table_class"]
		require.NotNil(t, v, "the module has a table_class variable")
		assert.Equal(t, "STANDARD", v.Default)
		if tc, known := table["table_class"]; known && tc != nil {
			assert.Equal(t, "STANDARD", tc)
		}
	})
	t.Run("DDB-PITR-01 PITR on for 35 days", func(t *testing.T) {
		pitr := block(t, table, "point_in_time_recovery")
		assert.Equal(t, true, pitr["enabled"])
		assert.EqualValues(t, 35, pitr["recovery_period_in_days"])
	})
	t.Run("DDB-PROT-01 deletion protection on", func(t *testing.T) {
		assert.Equal(t, true, table["deletion_protection_enabled"])
	})
	t.Run("DDB-STREAM-01 stream NEW_AND_OLD_IMAGES", func(t *testing.T) {
		assert.Equal(t, true, table["stream_enabled"])
		assert.Equal(t, "NEW_AND_OLD_IMAGES", table["stream_view_type"])
	})
	t.Run("DDB-NAME-03 TTL on attribute ttl", func(t *testing.T) {
		ttl := block(t, table, "ttl")
		assert.Equal(t, true, ttl["enabled"])
		assert.Equal(t, "ttl", ttl["attribute_name"])
	})
	t.Run("DDB-SEC-04 AWS owned key by default", func(t *testing.T) {
		sse, _ := table["server_side_encryption"].([]any)
		assert.Empty(t, sse, "no server_side_encryption block means the AWS owned key")
	})
	t.Run("DDB-IDX-02 GSI projection INCLUDE", func(t *testing.T) {
		gsis := table["global_secondary_index"].([]any)
		require.Len(t, gsis, 1)
		g := gsis[0].(map[string]any)
		assert.Equal(t, "gsi1", g["name"])
		assert.Equal(t, "INCLUDE", g["projection_type"])
		assert.Equal(t, []any{"status"}, g["non_key_attributes"])
	})
	t.Run("standard tags merged", func(t *testing.T) {
		tags := table["tags"].(map[string]any)
		assert.Equal(t, map[string]any{"env": "dev", "product": "fuga", "usage": "user", "managed-by": "terraform", "dynops:key-schema": "hash=user_id range=-"}, tags)
	})
	t.Run("contributor insights on table and GSIs", func(t *testing.T) {
		assert.Contains(t, p.ResourcePlannedValuesMap, "aws_dynamodb_contributor_insights.table[0]")
		assert.Contains(t, p.ResourcePlannedValuesMap, `aws_dynamodb_contributor_insights.gsi["gsi1"]`)
	})
	t.Run("no replicas", func(t *testing.T) {
		r, _ := table["replica"].([]any)
		assert.Empty(t, r)
	})
}

// planOnTarget plans against the target (the emulator by default): an
// autoscaled table reads its live capacity at plan time, which an offline
// plan cannot. Nothing is applied.
func planOnTarget(t *testing.T, vars map[string]any) (*terraform.PlanStruct, map[string]any) {
	t.Helper()
	opts := target.Options(t, module, vars)
	opts.PlanFilePath = filepath.Join(t.TempDir(), "plan.out")
	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	rc, ok := p.ResourcePlannedValuesMap["aws_dynamodb_table.this"]
	require.True(t, ok, "plan has no aws_dynamodb_table.this")
	return p, rc.AttributeValues
}

func TestPlanProvisionedCreatesAutoScaling_DDB_CAP_01(t *testing.T) {
	t.Parallel()
	p, table := planOnTarget(t, with(map[string]any{
		"billing_mode": "PROVISIONED", "provisioned_reason": "steady load", "read_capacity": 5, "write_capacity": 3,
		"product":     harness.UniqueID(),
		"autoscaling": map[string]any{"scale_in_cooldown": 120, "write_max_capacity": 40},
		"global_secondary_indexes": []map[string]any{
			{"name": "gsi1", "hash_key": "email", "non_key_attributes": []string{"status"}, "read_capacity": 2, "read_max_capacity": 8},
		},
	}))
	// A new table starts at the minimum; each target has its own min and max.
	assert.EqualValues(t, 5, table["read_capacity"])
	g := table["global_secondary_index"].([]any)[0].(map[string]any)
	assert.EqualValues(t, 2, g["read_capacity"], "gsi1's own minimum")
	assert.EqualValues(t, 3, g["write_capacity"], "gsi1 defaults to the table's")
	for addr, mm := range map[string][2]float64{
		`aws_appautoscaling_target.this["table-read"]`:  {5, 50},
		`aws_appautoscaling_target.this["table-write"]`: {3, 40},
		`aws_appautoscaling_target.this["gsi1-read"]`:   {2, 8},
		`aws_appautoscaling_target.this["gsi1-write"]`:  {3, 40},
	} {
		if rc, ok := p.ResourcePlannedValuesMap[addr]; assert.True(t, ok, addr) {
			assert.EqualValues(t, mm[0], rc.AttributeValues["min_capacity"], "%s min", addr)
			assert.EqualValues(t, mm[1], rc.AttributeValues["max_capacity"], "%s max", addr)
		}
	}
	pol := p.ResourcePlannedValuesMap[`aws_appautoscaling_policy.this["table-read"]`].AttributeValues
	cfg := pol["target_tracking_scaling_policy_configuration"].([]any)[0].(map[string]any)
	assert.EqualValues(t, 120, cfg["scale_in_cooldown"])
	assert.Equal(t, "PROVISIONED", table["billing_mode"])
	want := map[string]string{
		`aws_appautoscaling_target.this["table-read"]`:  "dynamodb:table:ReadCapacityUnits",
		`aws_appautoscaling_target.this["table-write"]`: "dynamodb:table:WriteCapacityUnits",
		`aws_appautoscaling_target.this["gsi1-read"]`:   "dynamodb:index:ReadCapacityUnits",
		`aws_appautoscaling_target.this["gsi1-write"]`:  "dynamodb:index:WriteCapacityUnits",
	}
	for addr, dim := range want {
		rc, ok := p.ResourcePlannedValuesMap[addr]
		if assert.True(t, ok, "missing %s", addr) {
			assert.Equal(t, dim, rc.AttributeValues["scalable_dimension"])
		}
		policy := strings.Replace(addr, "aws_appautoscaling_target", "aws_appautoscaling_policy", 1)
		assert.Contains(t, p.ResourcePlannedValuesMap, policy)
	}
	tags := table["tags"].(map[string]any)
	assert.Equal(t, "provisioned: steady load", tags["dynops:exception:DDB-CAP-01"], "the exception is visible in the plan")
}

func TestPlanCustomerManagedKey_DDB_SEC_04(t *testing.T) {
	t.Parallel()
	arn := tableKey
	_, table := plan(t, "customer managed key")
	sse := block(t, table, "server_side_encryption")
	assert.Equal(t, true, sse["enabled"])
	assert.Equal(t, arn, sse["kms_key_arn"])
}

func TestPlanExceptionsAreTagged(t *testing.T) {
	t.Parallel()
	_, table := plan(t, "exceptions")
	tags := table["tags"].(map[string]any)
	assert.Equal(t, "compliance: user data gone in 7 days", tags["dynops:exception:DDB-PITR-01"])
	assert.Equal(t, "ARCH-42 reporting index", tags["dynops:exception:DDB-IDX-02"])
	assert.EqualValues(t, 7, block(t, table, "point_in_time_recovery")["recovery_period_in_days"])
}

func TestPlanPITROptOutWithReason_DDB_PITR_01(t *testing.T) {
	t.Parallel()
	_, table := plan(t, "pitr opt-out")
	pitr := block(t, table, "point_in_time_recovery")
	assert.Equal(t, false, pitr["enabled"])
	assert.Equal(t, "work table rebuilt nightly", table["tags"].(map[string]any)["dynops:exception:DDB-PITR-01"])
}

// moduleRefusals are the refusal matrices of the module's tests, run together
// (harness.RefusalGroup: one init, one set of terraform test processes).
var moduleRefusals = harness.NewRefusalGroup(module,
	harness.RefusalSet{Test: "TestPlanValidations", Cases: validationRefusals},
	harness.RefusalSet{Test: "TestPlanCostCeilingRefusals_DDB_CAP_04", Cases: costCeilingRefusals},
)

// TestPlanValidations: every guard refuses bad input with its rule ID and a fix.
func TestPlanValidations(t *testing.T) {
	t.Parallel()
	moduleRefusals.Expect(t)
}

func validationRefusals() []harness.Refusal {
	gsi := func(g map[string]any) []map[string]any { return []map[string]any{g} }
	many := make([]map[string]any, 21)
	for i := range many {
		many[i] = map[string]any{"name": "gsi" + string(rune('1'+i%9)) + strings.Repeat("0", i/9), "hash_key": "email", "projection_type": "KEYS_ONLY"}
	}
	type refusal struct {
		name string
		vars map[string]any
		rule string
		fix  string
		// where the message says the problem is; default "table NAME:"
		where string
	}
	cases := []refusal{
		{"env not allowed", with(map[string]any{"env": "qa"}), "DDB-NAME-01", "allowed_envs", `env "qa"`},
		{"product with underscore", with(map[string]any{"product": "fuga_api"}), "DDB-NAME-01", "joined by '-'", `product "fuga_api"`},
		{"usage with capitals", with(map[string]any{"usage": "UserLog"}), "DDB-NAME-01", "lower case", `usage "UserLog"`},
		{"GSI named after its key", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "user_id-index", "hash_key": "email", "projection_type": "KEYS_ONLY"})}), "DDB-NAME-02", "gsi1", ""},
		{"projection ALL without approval", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email", "projection_type": "ALL"})}), "DDB-IDX-02", "allow_projection_all", ""},
		{"projection ALL approved without reason", with(map[string]any{"allow_projection_all": true, "global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email", "projection_type": "ALL"})}), "DDB-IDX-02", "projection_all_reason", ""},
		{"INCLUDE without attributes", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email"})}), "DDB-IDX-02", "KEYS_ONLY", ""},
		{"more than 20 GSIs", with(map[string]any{"global_secondary_indexes": many}), "DDB-IDX-04", "at most 20", ""},
		{"attribute type BOOL", with(map[string]any{"attributes": []map[string]any{{"name": "user_id", "type": "BOOL"}, {"name": "email", "type": "S"}}}), "DDB-IDX-04", "S, N or B", ""},
		{"hash key not in attributes", with(map[string]any{"hash_key": "account_id"}), "DDB-IDX-04", "listed in attributes", ""},
		{"camelCase hash key", with(map[string]any{"hash_key": "userId"}), "DDB-NAME-03", "snake_case", ""},
		{"PK/SK keys without key_naming_reason", with(map[string]any{"hash_key": "PK", "attributes": []map[string]any{{"name": "PK", "type": "S"}, {"name": "email", "type": "S"}}}), "DDB-NAME-03", "key_naming_reason", ""},
		{"key_naming_reason does not cover non-key attributes", with(map[string]any{"hash_key": "PK", "key_naming_reason": "single-table keys", "attributes": []map[string]any{{"name": "PK", "type": "S"}, {"name": "Email", "type": "S"}}}), "DDB-IDX-04", "must be listed in attributes", ""}, // key_naming_reason excepts key attributes only: attributes holds no other (a non-key attribute is refused here, and by the provider: "all attributes must be indexed")
		{"PITR off without reason", with(map[string]any{"point_in_time_recovery": map[string]any{"enabled": false}}), "DDB-PITR-01", "point_in_time_recovery_reason", ""},
		{"PITR 7 days without reason", with(map[string]any{"point_in_time_recovery": map[string]any{"recovery_period_in_days": 7}}), "DDB-PITR-01", "point_in_time_recovery_reason", ""},
		{"PITR 40 days", with(map[string]any{"point_in_time_recovery": map[string]any{"recovery_period_in_days": 40}, "point_in_time_recovery_reason": "x"}), "DDB-PITR-01", "1 to 35", ""},
		{"deletion protection off without reason", with(map[string]any{"deletion_protection_enabled": false}), "DDB-PROT-01", "deletion_protection_disabled_reason", ""},
		{"PROVISIONED without reason", with(map[string]any{"billing_mode": "PROVISIONED", "read_capacity": 5, "write_capacity": 5}), "DDB-CAP-01", "provisioned_reason", ""},
		{"PROVISIONED without capacity", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady"}), "DDB-CAP-01", "read_capacity", ""},
		{"PROVISIONED without auto scaling or reason", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 5, "write_capacity": 5, "autoscaling": map[string]any{"enabled": false}}), "DDB-CAP-01", "autoscaling_disabled_reason", ""},
		{"stream KEYS_ONLY without reason", with(map[string]any{"stream_view_type": "KEYS_ONLY"}), "DDB-STREAM-01", "stream_view_type_reason", ""},
		{"table class GLACIER", with(map[string]any{"table_class": "GLACIER"}), "DDB-CAP-02", "STANDARD_INFREQUENT_ACCESS", ""},
		{"malformed KMS key", with(map[string]any{"kms_key_arn": "alias/my-key"}), "DDB-SEC-04", "arn:aws:kms", ""},
		// "replicas without stream" (DDB-DR-01) is gone: inline replicas are refused
		// outright (bug 4 below); modules/dynamodb-table-replica does not yet check
		// that the table has a stream (known gap, see the issue 14 report).
		{"LSI without range key", with(map[string]any{"local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email", "projection_type": "KEYS_ONLY"}}}), "DDB-IDX-01", "GSI", ""},
		{"LSI projection ALL without approval (bug 5)", with(map[string]any{"range_key": "email", "local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email", "projection_type": "ALL"}}}), "DDB-IDX-02", "allow_projection_all", ""},
		{"LSI projection ALL approved without reason (bug 5)", with(map[string]any{"range_key": "email", "allow_projection_all": true, "local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email", "projection_type": "ALL"}}}), "DDB-IDX-02", "projection_all_reason", ""},
		{"inline replicas (bug 4)", with(map[string]any{"replicas": []map[string]any{{"region": "us-west-2"}}}), "DDB-PROT-01", "modules/dynamodb-table-replica", ""},
		{"forged PITR exception tag (bug 7)", with(map[string]any{"tags": map[string]any{"dynops:exception:DDB-PITR-01": "x"}}), "DDB-EXC-01", "point_in_time_recovery_reason", ""},
		{"forged exception tag in other case (bug 7)", with(map[string]any{"tags": map[string]any{"Dynops:Exception:DDB-PROT-01": "x"}}), "DDB-EXC-01", "Dynops:Exception:DDB-PROT-01", ""},
		{"forged tag beside the tenant tags (bug 7)", with(map[string]any{"tags": map[string]any{"dynops:tenant-key": "user_id", "dynops:exception:DDB-CAP-01": "x"}}), "DDB-EXC-01", "dynops:exception:DDB-CAP-01", ""},
		{"tenant key tag in other case (bug 7)", with(map[string]any{"tags": map[string]any{"Dynops:Tenant-Key": "user_id"}}), "DDB-EXC-01", "Dynops:Tenant-Key", ""},
		{"tenant key is not the hash key", with(map[string]any{"tags": map[string]any{"dynops:tenant-key": "email"}}), "DDB-SEC-02", "tenant key must be the table's hash_key", ""},
		{"forged key-schema tag (bug 7)", with(map[string]any{"tags": map[string]any{"dynops:key-schema": "hash=x"}}), "DDB-EXC-01", "dynops:key-schema", ""},
		{"TTL off without reason", with(map[string]any{"ttl_enabled": false}), "DDB-NAME-03", "ttl_reason", ""},
		{"TTL on another attribute without reason", with(map[string]any{"ttl_attribute_name": "expires_at"}), "DDB-NAME-03", "ttl_reason", ""},
		{"name override without reason", with(map[string]any{"name_override": "LegacyUsers"}), "DDB-NAME-01", "name_override_reason", "table LegacyUsers:"},
		{"name with the readiness throwaway prefix (issue 44)", with(map[string]any{"product": "dynops", "usage": "restoretest-orders"}), "DDB-NAME-01", "are reserved for the readiness run's throwaway restore-test tables", ""},
		{"name override with another env's throwaway prefix (issue 44)", with(map[string]any{"name_override": "prod-dynops-restoretest-1700000000", "name_override_reason": "kept from v1"}), "DDB-NAME-01", "choose another product or usage", "table prod-dynops-restoretest-1700000000:"},
		{"on-demand cap on a PROVISIONED table", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 5, "write_capacity": 5, "on_demand_throughput": map[string]any{"max_read_request_units": 100}}), "DDB-CAP-01", "auto scaling's maximum", ""},
		{"auto scaling max below min", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 5, "write_capacity": 5, "autoscaling": map[string]any{"read_max_capacity": 2}}), "DDB-CAP-01", "at least its minimum", ""},
		{"no allowed environment", with(map[string]any{"allowed_envs": []string{}}), "DDB-NAME-01", `each lower case letters and digits (e.g. "dev")`, "allowed_envs must list at least one environment"},
		{"allowed environment with capitals", with(map[string]any{"allowed_envs": []string{"dev", "Prod"}}), "DDB-NAME-01", `each lower case letters and digits (e.g. "dev")`, "allowed_envs must list at least one environment"},
		{"camelCase range key", with(map[string]any{"range_key": "createdAt", "attributes": []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}, {"name": "createdAt", "type": "S"}}}), "DDB-NAME-03", `range_key must be a snake_case attribute name (e.g. "created_at"), or set key_naming_reason`, ""},
		{"attribute listed twice", with(map[string]any{"attributes": []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}, {"name": "email", "type": "S"}}}), "DDB-IDX-04", "list each key attribute once", ""},
		{"two GSIs named gsi1", with(map[string]any{"global_secondary_indexes": []map[string]any{{"name": "gsi1", "hash_key": "email", "projection_type": "KEYS_ONLY"}, {"name": "gsi1", "hash_key": "user_id", "projection_type": "KEYS_ONLY"}}}), "DDB-NAME-02", "number them gsi1, gsi2, ... once each", ""},
		{"GSI projection KEYS", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email", "projection_type": "KEYS"})}), "DDB-IDX-02", "GSI projection_type must be INCLUDE (default), KEYS_ONLY or ALL", ""},
		{"GSI hash key not in attributes", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "status", "projection_type": "KEYS_ONLY"})}), "DDB-IDX-04", "every GSI hash_key and range_key must be listed in attributes", ""},
		{"GSI range key not in attributes", with(map[string]any{"global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email", "range_key": "created_at", "projection_type": "KEYS_ONLY"})}), "DDB-IDX-04", "every GSI hash_key and range_key must be listed in attributes", ""},
		{"LSI named after its key", with(map[string]any{"range_key": "email", "local_secondary_indexes": []map[string]any{{"name": "email-index", "range_key": "email", "projection_type": "KEYS_ONLY"}}}), "DDB-NAME-02", "LSI names must be generic sequence names lsi1, lsi2", ""},
		{"six LSIs", with(map[string]any{"range_key": "email", "local_secondary_indexes": []map[string]any{
			{"name": "lsi1", "range_key": "email", "projection_type": "KEYS_ONLY"}, {"name": "lsi2", "range_key": "email", "projection_type": "KEYS_ONLY"},
			{"name": "lsi3", "range_key": "email", "projection_type": "KEYS_ONLY"}, {"name": "lsi4", "range_key": "email", "projection_type": "KEYS_ONLY"},
			{"name": "lsi5", "range_key": "email", "projection_type": "KEYS_ONLY"}, {"name": "lsi6", "range_key": "email", "projection_type": "KEYS_ONLY"}}}), "DDB-IDX-04", "a table has at most 5 LSIs", ""},
		{"LSI projection KEYS", with(map[string]any{"range_key": "email", "local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email", "projection_type": "KEYS"}}}), "DDB-IDX-02", "LSI projection_type must be INCLUDE (default), KEYS_ONLY or ALL", ""},
		{"LSI INCLUDE without attributes", with(map[string]any{"range_key": "email", "local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "email"}}}), "DDB-IDX-02", `an LSI with projection_type INCLUDE must list non_key_attributes; or set projection_type = "KEYS_ONLY"`, ""},
		{"billing mode ON_DEMAND", with(map[string]any{"billing_mode": "ON_DEMAND"}), "DDB-CAP-01", "billing_mode must be PAY_PER_REQUEST (default) or PROVISIONED", ""},
		{"stream view type ALL", with(map[string]any{"stream_view_type": "ALL"}), "DDB-STREAM-01", "stream_view_type must be NEW_AND_OLD_IMAGES (default), NEW_IMAGE, OLD_IMAGE or KEYS_ONLY", ""},
		{"camelCase TTL attribute without a reason", with(map[string]any{"ttl_attribute_name": "expiresAt"}), "DDB-NAME-03", `TTL off or on an attribute other than "ttl" needs ttl_reason`, ""},
		{"TTL attribute not a name", with(map[string]any{"ttl_attribute_name": "expires at", "ttl_reason": "legacy TTL attribute"}), "DDB-NAME-03", `ttl_attribute_name must be an attribute name`, ""},
		{"name override with a space", with(map[string]any{"name_override": "Legacy Users", "name_override_reason": "kept from v1"}), "DDB-NAME-01", "must be a DynamoDB table name (3 to 255 of a-z A-Z 0-9 _ . -)", `name_override "Legacy Users"`},
		{"PROVISIONED without write capacity", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 5}), "DDB-CAP-01", "billing_mode PROVISIONED needs write_capacity >= 1", ""},
		{"PROVISIONED with read capacity 0", with(map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 0, "write_capacity": 5}), "DDB-CAP-01", "billing_mode PROVISIONED needs read_capacity >= 1", ""},
		{"AWS managed key and a CMK", with(map[string]any{"aws_managed_key_enabled": true, "kms_key_arn": "arn:aws:kms:eu-west-1:123456789012:key/abc"}), "DDB-SEC-04", "not both", ""},
	}
	// Bug 6: a reason made only of characters the tag cleaner removes would
	// become an empty exception tag; every reason input refuses it.
	for _, r := range []refusal{
		{"provisioned_reason", map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "!!!", "read_capacity": 5, "write_capacity": 5}, "DDB-CAP-01", "letters or digits", ""},
		{"autoscaling_disabled_reason", map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady", "read_capacity": 5, "write_capacity": 5, "autoscaling": map[string]any{"enabled": false}, "autoscaling_disabled_reason": "()"}, "DDB-CAP-01", "letters or digits", ""},
		{"projection_all_reason", map[string]any{"allow_projection_all": true, "projection_all_reason": "#?", "global_secondary_indexes": gsi(map[string]any{"name": "gsi1", "hash_key": "email", "projection_type": "ALL"})}, "DDB-IDX-02", "letters or digits", ""},
		{"point_in_time_recovery_reason", map[string]any{"point_in_time_recovery": map[string]any{"recovery_period_in_days": 7}, "point_in_time_recovery_reason": "<>"}, "DDB-PITR-01", "letters or digits", ""},
		{"deletion_protection_disabled_reason", map[string]any{"deletion_protection_enabled": false, "deletion_protection_disabled_reason": "*"}, "DDB-PROT-01", "letters or digits", ""},
		{"stream_view_type_reason", map[string]any{"stream_view_type": "KEYS_ONLY", "stream_view_type_reason": "!?"}, "DDB-STREAM-01", "letters or digits", ""},
		{"ttl_reason", map[string]any{"ttl_enabled": false, "ttl_reason": "  "}, "DDB-NAME-03", "ttl_reason", ""},
		{"key_naming_reason", map[string]any{"hash_key": "PK", "key_naming_reason": "--", "attributes": []map[string]any{{"name": "PK", "type": "S"}, {"name": "email", "type": "S"}}}, "DDB-NAME-03", "letters or digits", ""},
		{"name_override_reason", map[string]any{"name_override": "LegacyUsers", "name_override_reason": "&&"}, "DDB-NAME-01", "letters or digits", "table LegacyUsers:"},
	} {
		r.vars = with(r.vars)
		r.name = r.name + " of punctuation only (bug 6)"
		cases = append(cases, r)
	}
	// Each case asserts on its diagnostic's own summary and detail, not on
	// terraform's stderr: stderr also echoes the variable values, which
	// would match the fix's input name (see harness.ExpectRefusals).
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, c := range cases {
		where := c.where
		if where == "" {
			where = "table " + tableName(c.vars) + ":"
		}
		refusals = append(refusals, harness.Refusal{Name: c.rule + " " + c.name, Vars: c.vars, Want: []string{c.rule + ":", where, c.fix}})
	}
	return refusals
}

// tableName is the name the module gives vars' table, as validation messages cite it.
func tableName(vars map[string]any) string {
	if n, ok := vars["name_override"].(string); ok {
		return n
	}
	return fmt.Sprintf("%s-%s-%s", vars["env"], vars["product"], vars["usage"])
}
