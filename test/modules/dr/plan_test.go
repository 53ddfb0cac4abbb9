package dr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const example = "modules/dr/examples/two-region"

// withAccount is vars with the account ID every DR root takes.
func withAccount(vars map[string]any) map[string]any {
	all := map[string]any{"account_id": "123456789012"}
	for k, v := range vars {
		all[k] = v
	}
	return all
}

// plans are the package's offline plans that must succeed, planned together
// in one terraform run (harness.PlanGroup); each test reads its own case.
var plans = harness.NewPlanGroup(
	harness.PlanCase{Name: "vault lock, no copy", Dir: example, Vars: func(testing.TB) map[string]any {
		return withAccount(map[string]any{"env": "prod", "global_tables": []string{"prod-hoge-session"}, "regional_tables": []string{},
			"backup_global_tables": true, "backup_copy_to_other_region": false, "secondary_region": "eu-central-1",
			"backup_vault_lock": map[string]any{"min_retention_days": 7, "max_retention_days": 400, "changeable_for_days": 3}})
	}},
	harness.PlanCase{Name: "envs/prod", Dir: "envs/prod", Vars: func(testing.TB) map[string]any {
		return withAccount(map[string]any{"failover_trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}})
	}},
)

// TestPlanBackupVaultLockAndNoCopy_DDB_DR_01: modules/dr with a vault lock
// locks both vaults with the values given; copy_to_other_region = false
// plans no copy_action in either plan; global tables alone enable backup.
func TestPlanBackupVaultLockAndNoCopy_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "vault lock, no copy")
	for _, side := range []string{"primary", "secondary"} {
		v := values(t, p, "module.dr.aws_backup_vault_lock_configuration."+side+"[0]")
		assert.EqualValues(t, 7, v["min_retention_days"], side)
		assert.EqualValues(t, 400, v["max_retention_days"], side)
		assert.EqualValues(t, 3, v["changeable_for_days"], side)
	}
	for _, plan := range []string{"this", "secondary"} {
		rules := values(t, p, "module.dr.aws_backup_plan."+plan+"[0]")["rule"].([]any)
		require.Len(t, rules, 1)
		assert.Empty(t, rules[0].(map[string]any)["copy_action"], "%s: copy_to_other_region = false", plan)
	}
	assert.Equal(t, []string{"arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-session"}, list(values(t, p, "module.dr.aws_backup_selection.secondary[0]")["resources"]))
	_, fis := p.ResourcePlannedValuesMap["module.dr.aws_fis_experiment_template.pause_replication[0]"]
	assert.False(t, fis, "no FIS template unless fis_pause_replication.enabled (TestPlanPauseReplicationTemplate_DDB_DR_01)")
}

func values(t *testing.T, p *terraform.PlanStruct, addr string) map[string]any {
	t.Helper()
	rc, ok := p.ResourcePlannedValuesMap[addr]
	require.True(t, ok, "plan has no %s", addr)
	return rc.AttributeValues
}

type statement struct {
	Sid       string
	Action    any
	Resource  any
	Condition map[string]map[string]any
}

func list(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

func TestPlanProdReplicasAndDR_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "envs/prod")

	t.Run("session is a global table with a replica in eu-central-1, PITR on", func(t *testing.T) {
		// Replicas are aws_dynamodb_table_replica resources of
		// modules/dynamodb-table-replica, on the secondary region's provider
		// (envs/prod/replicas.tf), not inline replica blocks.
		var replicas []string
		for addr, rc := range p.ResourcePlannedValuesMap {
			if rc.Type == "aws_dynamodb_table_replica" && rc.Mode == "managed" {
				replicas = append(replicas, addr)
				assert.Equal(t, true, rc.AttributeValues["point_in_time_recovery"], "%s DDB-PITR-01", addr)
				assert.Equal(t, true, rc.AttributeValues["deletion_protection_enabled"], "%s DDB-PROT-01", addr)
			}
		}
		require.Len(t, replicas, 1, "one replica: %v", replicas)
		assert.Contains(t, replicas[0], "session", "the session table's replica")
		for _, usage := range []string{"session", "user", "order"} {
			other := values(t, p, fmt.Sprintf(`module.stack.module.table[%q].aws_dynamodb_table.this`, usage))
			assert.Empty(t, other["replica"], "%s is not global", usage)
		}
	})
	t.Run("the pointer in both regions, for the global table only, naming the primary", func(t *testing.T) {
		for _, side := range []string{"primary", "secondary"} {
			v := values(t, p, fmt.Sprintf(`module.dr.aws_ssm_parameter.%s["prod-hoge-session"]`, side))
			assert.Equal(t, "/dynops/dr/prod-hoge-session/active-region", v["name"])
			assert.Equal(t, target.Region, v["value"])
			assert.NotContains(t, p.ResourcePlannedValuesMap, fmt.Sprintf(`module.dr.aws_ssm_parameter.%s["prod-hoge-user"]`, side))
		}
	})
	t.Run("every table and replica is in a backup plan with a copy to the other region (Security Hub DynamoDB.4)", func(t *testing.T) {
		plan := values(t, p, "module.dr.aws_backup_plan.this[0]")
		rules := plan["rule"].([]any)
		require.Len(t, rules, 1)
		rule := rules[0].(map[string]any)
		assert.Len(t, rule["copy_action"], 1, "cross-region copy")
		sel := values(t, p, "module.dr.aws_backup_selection.this[0]")
		res := list(sel["resources"])
		require.Len(t, res, 3, "the regional tables and the global table in the primary region")
		for _, arn := range res {
			assert.Regexp(t, `^arn:aws:dynamodb:`+target.Region+`:\d{12}:table/prod-hoge-(user|order|session)$`, arn)
		}
		replicas := values(t, p, "module.dr.aws_backup_plan.secondary[0]")
		rrules := replicas["rule"].([]any)
		require.Len(t, rrules, 1)
		assert.Len(t, rrules[0].(map[string]any)["copy_action"], 1, "the replicas' recovery points are copied back to the primary region")
		rsel := values(t, p, "module.dr.aws_backup_selection.secondary[0]")
		assert.Equal(t, []string{"arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-session"}, list(rsel["resources"]), "the global table's replica in the secondary region")
		assert.NotContains(t, p.ResourcePlannedValuesMap, "module.dr.aws_backup_vault_lock_configuration.primary[0]", "no vault lock unless asked")
	})
	t.Run("DDB-SEC-01 the failover role gets only what dynops dr calls", func(t *testing.T) {
		v := values(t, p, "module.dr.aws_iam_role_policy.failover[0]")
		doc, ok := v["policy"].(string)
		require.True(t, ok, "policy known at plan: %v", v["policy"])
		var pol struct{ Statement []statement }
		require.NoError(t, json.Unmarshal([]byte(doc), &pol))
		got := map[string]statement{}
		for _, s := range pol.Statement {
			got[s.Sid] = s
		}
		require.ElementsMatch(t, []string{"InspectAndFence", "Canary", "Pointer", "ReplicationLatency", "PauseExperiments", "DenyPolicyChangesWithoutMFA", "DenyOutsideDocumentedSet"}, keys(got))
		assert.Equal(t, []string{"fis:ListExperiments"}, list(got["PauseExperiments"].Action), "dr failover --pause-template")
		assert.ElementsMatch(t, []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"}, list(got["InspectAndFence"].Action))
		assert.ElementsMatch(t, []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem"}, list(got["Canary"].Action))
		assert.Equal(t, []string{"dynops-dr-canary#*"}, list(got["Canary"].Condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]))
		tables := list(got["InspectAndFence"].Resource)
		require.Len(t, tables, 2, "the global table in both regions, nothing else")
		for _, arn := range tables {
			assert.Regexp(t, `^arn:aws:dynamodb:(`+target.Region+`|eu-central-1):\d{12}:table/prod-hoge-session$`, arn)
		}
		for _, arn := range list(got["Pointer"].Resource) {
			assert.Regexp(t, `^arn:aws:ssm:(`+target.Region+`|eu-central-1):\d{12}:parameter/dynops/dr/prod-hoge-session/active-region$`, arn)
		}
		assert.ElementsMatch(t, []string{"ssm:GetParameter", "ssm:PutParameter"}, list(got["Pointer"].Action))
		assert.Equal(t, []string{"cloudwatch:GetMetricData"}, list(got["ReplicationLatency"].Action))
		assert.NotContains(t, doc, `"dynamodb:*"`)
	})
}

func keys(m map[string]statement) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPlanValidations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		vars map[string]any
		want string
	}{
		{"DDB-SEC-01 failover role without principals", map[string]any{"trusted_principal_arns": []string{}}, "DDB-SEC-01: failover_role.trusted_principal_arns must name who may assume"},
		{"DDB-SEC-01 principal that is not an ARN", map[string]any{"trusted_principal_arns": []string{"oncall"}}, "DDB-SEC-01: failover_role.trusted_principal_arns must be IAM ARNs"},
		{"DDB-NAME-01 table name", map[string]any{"global_tables": []string{"Session_Table"}}, "DDB-NAME-01: tables must be table names"},
		{"DDB-DR-01 backup schedule", map[string]any{"backup_schedule": "daily"}, "DDB-DR-01: backup.schedule must be an AWS Backup schedule expression"},
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, tc := range cases {
		vars := map[string]any{"account_id": "123456789012"}
		for k, v := range tc.vars {
			vars[k] = v
		}
		refusals = append(refusals, harness.Refusal{Name: tc.name, Vars: vars, Want: []string{tc.want}})
	}
	harness.ExpectRefusals(t, example, refusals)
}

// TestPlanModuleValidations: every validation of modules/dr itself, with
// its rule and its fix; the example (TestPlanValidations) reaches only the
// inputs it passes through.
func TestPlanModuleValidations(t *testing.T) {
	t.Parallel()
	principals := map[string]any{"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}}
	route53 := func(over map[string]any) map[string]any {
		r := map[string]any{"zone_id": "Z0123456789ABCDEFGHIJ", "record_name": "api.prod.example.internal", "primary_endpoint": "api.eu-west-1.example.com", "secondary_endpoint": "api.eu-central-1.example.com"}
		for k, v := range over {
			r[k] = v
		}
		return r
	}
	cases := []struct {
		name string
		vars map[string]any
		want []string
	}{
		{"DDB-SEC-03 account id", map[string]any{"account_id": "1234"}, []string{"DDB-SEC-03: account_id must be the 12-digit AWS account ID of the environment"}},
		{"DDB-NAME-01 env not lower case", map[string]any{"env": "Prod"}, []string{"DDB-NAME-01: env must be lower case letters and digits", `(e.g. "prod")`}},
		{"DDB-NAME-01 table name", map[string]any{"tables": []string{"Prod_Session"}}, []string{"DDB-NAME-01: tables must be table names {env}-{product}-{usage}", `e.g. "prod-hoge-session"`}},
		{"DDB-SEC-03 table of another env", map[string]any{"tables": []string{"dev-hoge-session"}}, []string{`DDB-SEC-03: every table must be one of this env's (name starting with "<env>-")`, "the failover role of one env never reaches another env's tables"}},
		{"DDB-DR-01 pointer prefix without leading slash", map[string]any{"pointer_prefix": "dynops/dr"}, []string{"DDB-DR-01: pointer_prefix must be an SSM path such as \"/dynops/dr\"", "(leading slash, no trailing slash)"}},
		{"DDB-SEC-01 failover role without principals", map[string]any{"failover_role": map[string]any{}}, []string{"DDB-SEC-01: failover_role.trusted_principal_arns must name who may assume the failover role", "or set failover_role.enabled = false"}},
		{"DDB-SEC-01 principal that is not an ARN", map[string]any{"failover_role": map[string]any{"trusted_principal_arns": []string{"*"}}}, []string{"DDB-SEC-01: failover_role.trusted_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME)"}},
		{"DDB-SEC-01 no MFA without a reason", map[string]any{"failover_role": map[string]any{"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}, "require_mfa": false}}, []string{"DDB-SEC-01: failover_role.require_mfa = false lets a session without MFA lift the DR fence", "set failover_role_no_mfa_reason"}},
		{"DDB-SEC-01 no MFA with a reason without letters or digits", map[string]any{"failover_role": map[string]any{"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}, "require_mfa": false}, "failover_role_no_mfa_reason": " - "}, []string{"DDB-SEC-01: failover_role.require_mfa = false lets a session without MFA lift the DR fence"}},
		// The reason moved out of the object in v2.0.0: the old place is dropped by type conversion and refused.
		{"DDB-SEC-01 no MFA with the reason in its pre-v2 place", map[string]any{"failover_role": map[string]any{"trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}, "require_mfa": false, "no_mfa_reason": "break-glass for region loss"}}, []string{"DDB-SEC-01: failover_role.require_mfa = false", "before v2.0.0 it was failover_role.no_mfa_reason"}},
		{"DDB-DR-01 route53 port", map[string]any{"route53": route53(map[string]any{"port": 70000})}, []string{`DDB-DR-01: route53.port must be a TCP port and route53.path an HTTP path starting with "/"`}},
		{"DDB-DR-01 route53 path", map[string]any{"route53": route53(map[string]any{"path": "health"})}, []string{`DDB-DR-01: route53.port must be a TCP port and route53.path an HTTP path starting with "/"`}},
		{"DDB-SEC-03 backup table of another env", map[string]any{"backup": map[string]any{"tables": []string{"dev-hoge-user"}}}, []string{`DDB-SEC-03: every backup.tables entry must be one of this env's tables (name starting with "<env>-")`}},
		{"DDB-DR-01 backup without tables", map[string]any{"backup": map[string]any{"enabled": true}}, []string{"DDB-DR-01: backup.enabled needs backup.tables or backup.global_tables", "modules/dynamodb-stack outputs regional_table_names and global_table_names"}},
		{"DDB-DR-01 backup retention", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "retention_days": 0}}, []string{"DDB-DR-01: backup.retention_days and backup.copy_retention_days must be at least 1"}},
		{"DDB-DR-01 backup copy retention", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "copy_retention_days": 0}}, []string{"DDB-DR-01: backup.retention_days and backup.copy_retention_days must be at least 1"}},
		{"DDB-DR-01 backup schedule", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "schedule": "daily"}}, []string{"DDB-DR-01: backup.schedule must be an AWS Backup schedule expression", `e.g. "cron(0 3 * * ? *)"`}},
		{"DDB-SEC-03 backup global table of another env", map[string]any{"backup": map[string]any{"global_tables": []string{"dev-hoge-session"}}}, []string{"DDB-SEC-03: every backup.global_tables entry must be one of this env's tables"}},
		{"DDB-SEC-03 backup table both regional and global", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-session"}, "global_tables": []string{"prod-hoge-session"}}}, []string{"DDB-SEC-03: every backup.global_tables entry must be one of this env", "and not also in backup.tables"}},
		{"DDB-DR-01 vault lock min above retention", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "vault_lock": map[string]any{"min_retention_days": 36}}}, []string{"DDB-DR-01: backup.vault_lock: min_retention_days must be at least 1 and at most retention_days"}},
		{"DDB-DR-01 vault lock min 0", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "vault_lock": map[string]any{"min_retention_days": 0}}}, []string{"DDB-DR-01: backup.vault_lock"}},
		{"DDB-DR-01 vault lock max below copy retention", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "copy_retention_days": 90, "vault_lock": map[string]any{"min_retention_days": 7, "max_retention_days": 60}}}, []string{"DDB-DR-01: backup.vault_lock", "max_retention_days (when set) at least both"}},
		{"DDB-DR-01 FIS duration not ISO 8601", map[string]any{"fis_pause_replication": map[string]any{"enabled": true, "duration": "10m"}}, []string{`DDB-DR-01: fis_pause_replication.duration must be an ISO 8601 duration such as "PT10M"`, "(1 minute to 12 hours)"}},
		{"DDB-DR-01 FIS duration under a minute", map[string]any{"fis_pause_replication": map[string]any{"duration": "PT30S"}}, []string{"DDB-DR-01: fis_pause_replication.duration must be an ISO 8601 duration"}},
		{"DDB-DR-01 FIS duration over 12 hours", map[string]any{"fis_pause_replication": map[string]any{"duration": "PT12H1M"}}, []string{"DDB-DR-01: fis_pause_replication.duration must be an ISO 8601 duration"}},
		{"DDB-DR-01 FIS stop alarm not an ARN", map[string]any{"fis_pause_replication": map[string]any{"stop_alarm_arns": []string{"my-alarm"}}}, []string{"DDB-DR-01: fis_pause_replication.stop_alarm_arns must be CloudWatch alarm ARNs"}},
		{"DDB-DR-01 vault lock changeable 2 days", map[string]any{"backup": map[string]any{"tables": []string{"prod-hoge-user"}, "vault_lock": map[string]any{"min_retention_days": 7, "changeable_for_days": 2}}}, []string{"DDB-DR-01: backup.vault_lock", "changeable_for_days (when set) at least 3"}},
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, tc := range cases {
		vars := map[string]any{"account_id": "123456789012", "env": "prod", "tables": []string{"prod-hoge-session"}, "failover_role": principals}
		for k, v := range tc.vars {
			vars[k] = v
		}
		refusals = append(refusals, harness.Refusal{Name: tc.name, Vars: vars, Want: tc.want})
	}
	harness.ExpectRefusals(t, "modules/dr", refusals)
}

// TestPlanPauseReplicationTemplate_DDB_DR_01: fis_pause_replication plans
// one FIS experiment template in the secondary region whose only action is
// aws:dynamodb:global-table-pause-replication on the secondary replicas of
// the env's global tables (by ARN), for the duration given; its role is
// assumable by FIS for this account only and may change those replicas'
// resource policies and nothing else. Off by default
// (TestPlanBackupVaultLockAndNoCopy_DDB_DR_01 plans it off); a bad duration
// is refused with the rule ID (TestPlanModuleValidations).
func TestPlanPauseReplicationTemplate_DDB_DR_01(t *testing.T) {
	t.Parallel()
	tables := []string{"prod-hoge-session", "prod-hoge-cart"}
	opts := harness.PlanOptions(t, example, map[string]any{"account_id": "123456789012", "env": "prod", "global_tables": tables, "regional_tables": []string{},
		"secondary_region": "eu-central-1", "fis_pause_replication_enabled": true})
	// The same plan has the failover role without MFA (a break-glass role):
	// its reason is the role's exception tag (DDB-EXC-01).
	main := filepath.Join(opts.TerraformDir, "main.tf")
	src, err := os.ReadFile(main)
	require.NoError(t, err)
	withoutMFA := strings.Replace(string(src), "  failover_role = {\n", "  failover_role_no_mfa_reason = \"break-glass: region loss <runbook dr.md>\"\n  failover_role = {\n    require_mfa = false\n", 1)
	require.NotEqual(t, string(src), withoutMFA, "the example's failover_role block moved: update this test")
	require.NoError(t, os.WriteFile(main, []byte(withoutMFA), 0o644))
	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	role := values(t, p, "module.dr.aws_iam_role.failover[0]")
	assert.Equal(t, "break-glass: region loss  runbook dr.md", role["tags"].(map[string]any)["dynops:exception:DDB-SEC-01"], "the reason, cleaned for a tag")
	arns := []string{"arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-session", "arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-cart"}

	tpl := values(t, p, "module.dr.aws_fis_experiment_template.pause_replication[0]")
	actions := tpl["action"].([]any)
	require.Len(t, actions, 1, "one action, nothing else broken")
	a := actions[0].(map[string]any)
	assert.Equal(t, "aws:dynamodb:global-table-pause-replication", a["action_id"])
	assert.Equal(t, []any{map[string]any{"key": "duration", "value": "PT10M"}}, a["parameter"])
	assert.Equal(t, []any{map[string]any{"key": "Tables", "value": "Tables"}}, a["target"])
	targets := tpl["target"].([]any)
	require.Len(t, targets, 1)
	tg := targets[0].(map[string]any)
	assert.Equal(t, "aws:dynamodb:global-table", tg["resource_type"])
	assert.Equal(t, "Tables", tg["name"])
	assert.Equal(t, "ALL", tg["selection_mode"])
	assert.ElementsMatch(t, arns, list(tg["resource_arns"]), "the secondary replicas, by ARN")
	assert.Empty(t, tg["resource_tag"], "no tag search")
	require.Len(t, tpl["stop_condition"], 1)
	assert.Equal(t, "none", tpl["stop_condition"].([]any)[0].(map[string]any)["source"], "no stop alarm given: FIS runs the duration unless stopped")

	var policy struct{ Statement []statement }
	require.NoError(t, json.Unmarshal([]byte(values(t, p, "module.dr.aws_iam_role_policy.fis[0]")["policy"].(string)), &policy))
	require.Len(t, policy.Statement, 2, "the pause statement and the cap (issue 44)")
	assert.ElementsMatch(t, []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"}, list(policy.Statement[0].Action))
	assert.ElementsMatch(t, arns, list(policy.Statement[0].Resource))
	assert.Equal(t, "DenyOutsideDocumentedSet", policy.Statement[1].Sid, "what a resource policy it writes grants, it cannot use (test/modules/access: TestFISRoleCappedAndTrustNamesExperiments_DDB_SEC_01)")
	var trust struct{ Statement []statement }
	require.NoError(t, json.Unmarshal([]byte(values(t, p, "module.dr.aws_iam_role.fis[0]")["assume_role_policy"].(string)), &trust))
	require.Len(t, trust.Statement, 1)
	assert.Equal(t, "123456789012", trust.Statement[0].Condition["StringEquals"]["aws:SourceAccount"], "this account's experiments only")
	assert.Equal(t, "arn:aws:fis:eu-central-1:123456789012:experiment/*", trust.Statement[0].Condition["ArnLike"]["aws:SourceArn"], "experiments in the template's region only")
}
