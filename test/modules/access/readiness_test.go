package access

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// readinessPlans plans modules/dynamodb-readiness (its own group: the
// module is not part of the access examples).
var readinessPlans = harness.NewPlanGroup(
	harness.PlanCase{Name: "readiness", Dir: "modules/dynamodb-readiness", Vars: func(t testing.TB) map[string]any {
		return map[string]any{
			"env": "dev", "restore_table_arn": tableARN("dev", "order"), "readiness_zip_path": harness.PlanZip(t),
			"alarm_actions":            []string{"arn:aws:sns:" + region + ":" + accountID + ":dev-example-alerts"},
			"permissions_boundary_arn": exampleBoundary, "log_kms_key_arn": matrixKMSKey,
		}
	}},
	harness.PlanCase{Name: "readiness example", Dir: "modules/dynamodb-readiness/examples/daily", Vars: func(t testing.TB) map[string]any {
		return map[string]any{"account_id": accountID, "readiness_zip_path": harness.PlanZip(t)}
	}},
)

// TestReadinessRoleLeastPrivilege runs the planned readiness Lambda policy
// through the real IAM evaluator: it reads the env's tables, restores only
// the chosen table into the throwaway prefix, writes items and tags only in
// throwaway tables (explicitly denied elsewhere, whatever else allows it),
// deletes only throwaway tables it tagged, and cannot delete an env table
// nor change resource policies, PITR, deletion protection or table settings.
func TestReadinessRoleLeastPrivilege(t *testing.T) {
	docs := policiesIn(t, readinessPlans.Plan(t, "readiness"))
	m := &matrix{principal: "arn:aws:iam::" + accountID + ":role/dev-dynops-readiness-lambda",
		policy: policyOf(t, docs, "aws_iam_role_policy.lambda")}
	source := tableARN("dev", "order")
	other := tableARN("dev", "user")
	throwaway := "arn:aws:dynamodb:" + region + ":" + accountID + ":table/dev-dynops-restoretest-1700000000"
	prodTable := tableARN("prod", "order")
	ns := func(n string) map[string]any { return map[string]any{"cloudwatch:namespace": n} }

	for _, a := range []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:Scan"} {
		m.add("read env table", a, allowed, a, other, nil)
		m.add("read other env's table", a, denied, a, prodTable, nil)
	}
	m.add("restore", "source", allowed, "dynamodb:RestoreTableToPointInTime", source, nil)
	m.add("restore", "other env table as source", denied, "dynamodb:RestoreTableToPointInTime", other, nil)
	m.add("restore", "into throwaway", allowed, "dynamodb:RestoreTableToPointInTime", throwaway, nil)
	m.add("restore", "write throwaway items", allowed, "dynamodb:BatchWriteItem", throwaway, nil)
	m.add("restore", "into a name outside the prefix", explicit, "dynamodb:RestoreTableToPointInTime", other, nil)
	// Issue 44: delete only a throwaway the restore test tagged; tag only a
	// throwaway, with that tag only, never a table the table module made.
	tagged := func(v string) map[string]any { return map[string]any{"aws:ResourceTag/dynops:restore-test": v} }
	m.add("delete", "tagged throwaway", allowed, "dynamodb:DeleteTable", throwaway, tagged("dev"))
	m.add("delete", "untagged throwaway", explicit, "dynamodb:DeleteTable", throwaway, nil)
	m.add("delete", "throwaway tagged for another env", explicit, "dynamodb:DeleteTable", throwaway, tagged("prod"))
	tagReq := func(key, v string, extra map[string]any) map[string]any {
		c := map[string]any{"aws:TagKeys": []string{key}, "aws:RequestTag/" + key: v}
		for k, x := range extra {
			c[k] = x
		}
		return c
	}
	m.add("tag", "throwaway with the restore-test tag", allowed, "dynamodb:TagResource", throwaway, tagReq("dynops:restore-test", "dev", nil))
	m.add("tag", "throwaway with another env's value", denied, "dynamodb:TagResource", throwaway, tagReq("dynops:restore-test", "prod", nil))
	m.add("tag", "throwaway with another key", denied, "dynamodb:TagResource", throwaway, tagReq("dynops:exception:DDB-PROT-01", "x", nil))
	m.add("tag", "a module-made table with the prefix (env tag)", denied, "dynamodb:TagResource", throwaway,
		tagReq("dynops:restore-test", "dev", map[string]any{"aws:ResourceTag/env": "dev"}))
	for _, arn := range []string{source, other, prodTable} {
		m.add("delete", arn, explicit, "dynamodb:DeleteTable", arn, tagged("dev"))
		m.add("tag", arn, explicit, "dynamodb:TagResource", arn, tagReq("dynops:restore-test", "dev", nil))
		for _, a := range []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:GetItem", "dynamodb:Query"} {
			m.add("items only in throwaway tables", a+" "+arn, explicit, a, arn, nil)
		}
	}
	for _, a := range []string{"dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "dynamodb:UpdateContinuousBackups", "dynamodb:UpdateTable", "dynamodb:UpdateTimeToLive", "dynamodb:CreateTable"} {
		m.add("no change", a, explicit, a, source, nil)
		m.add("no change of throwaway", a, explicit, a, throwaway, nil)
	}
	// `dr status` of the env's global tables: each replica read in its own
	// region, the env's pointers, ReplicationLatency; nothing written.
	replica := "arn:aws:dynamodb:eu-central-1:" + accountID + ":table/dev-example-session"
	prodReplica := "arn:aws:dynamodb:eu-central-1:" + accountID + ":table/prod-example-session"
	for _, a := range []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy"} {
		m.add("dr status", a+" replica in another region", allowed, a, replica, nil)
		m.add("dr status", a+" other env's replica", denied, a, prodReplica, nil)
	}
	for _, a := range []string{"dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "dynamodb:UpdateTable"} {
		m.add("dr status no change", a+" replica", explicit, a, replica, nil)
	}
	m.add("dr status no change", "dynamodb:PutItem replica", explicit, "dynamodb:PutItem", replica, nil)
	for _, a := range []string{"dynamodb:DescribeContinuousBackups", "dynamodb:Scan"} {
		m.add("dr status only", a+" replica in another region", denied, a, replica, nil)
	}
	pointer := func(reg, env string) string {
		return "arn:aws:ssm:" + reg + ":" + accountID + ":parameter/dynops/dr/" + env + "-example-session/active-region"
	}
	m.add("dr status", "pointer home region", allowed, "ssm:GetParameter", pointer(region, "dev"), nil)
	m.add("dr status", "pointer replica region", allowed, "ssm:GetParameter", pointer("eu-central-1", "dev"), nil)
	m.add("dr status", "other env's pointer", denied, "ssm:GetParameter", pointer(region, "prod"), nil)
	m.add("dr status", "other parameter", denied, "ssm:GetParameter", "arn:aws:ssm:"+region+":"+accountID+":parameter/dev/db-password", nil)
	m.add("dr status no change", "flip the pointer", explicit, "ssm:PutParameter", pointer(region, "dev"), nil)
	m.add("dr status", "ReplicationLatency", allowed, "cloudwatch:GetMetricData", "*", nil)
	m.add("dr status no change", "Route 53 health check", explicit, "route53:UpdateHealthCheck", "arn:aws:route53:::healthcheck/abcd", nil)
	m.add("metrics", "dynops/Readiness", allowed, "cloudwatch:PutMetricData", "*", ns("dynops/Readiness"))
	m.add("metrics", "AWS/DynamoDB", denied, "cloudwatch:PutMetricData", "*", ns("AWS/DynamoDB"))
	m.add("escalation", "iam:PassRole", explicit, "iam:PassRole", "arn:aws:iam::"+accountID+":role/admin", nil)

	evaluate(t, m.cells)
	for _, c := range m.cells {
		if !c.ok() {
			t.Errorf("%s / %s: %s on %s is %s (%s), want %s", c.row, c.col, c.sim.Request.Action, c.sim.Request.Resource.Resource, c.got.OverallResult, c.got.Errors, c.want)
		}
	}
}

// TestReadinessPlan: the module plans the schedule, the Lambda with the
// env and restore table, a log group with retention and the key, the
// boundary on both roles, and an alarm per rule plus the restore alarms to
// the topic; its example plans too.
func TestReadinessPlan(t *testing.T) {
	p := readinessPlans.Plan(t, "readiness")
	get := func(addr string) map[string]any {
		r, ok := p.ResourcePlannedValuesMap[addr]
		require.True(t, ok, "plan has no %s", addr)
		return r.AttributeValues
	}
	fn := get("aws_lambda_function.this")
	env := fn["environment"].([]any)[0].(map[string]any)["variables"].(map[string]any)
	require.Equal(t, map[string]any{"READINESS_ENV": "dev", "READINESS_RESTORE_TABLE": "dev-example-order"}, env)
	require.EqualValues(t, 1, fn["reserved_concurrent_executions"])
	lg := get("aws_cloudwatch_log_group.this")
	require.EqualValues(t, 30, lg["retention_in_days"])
	require.Equal(t, matrixKMSKey, lg["kms_key_id"])
	for _, r := range []string{"aws_iam_role.lambda", "aws_iam_role.scheduler"} {
		require.Equal(t, exampleBoundary, get(r)["permissions_boundary"], r)
	}
	sched := get("aws_scheduler_schedule.this")
	require.JSONEq(t, `{"env":"dev","restore_table":"dev-example-order"}`, sched["target"].([]any)[0].(map[string]any)["input"].(string))

	alarms := 0
	topic := "arn:aws:sns:" + region + ":" + accountID + ":dev-example-alerts"
	for addr, r := range p.ResourcePlannedValuesMap {
		if r.Type != "aws_cloudwatch_metric_alarm" {
			continue
		}
		alarms++
		require.Equal(t, []any{topic}, r.AttributeValues["alarm_actions"], addr)
		require.Equal(t, "dynops/Readiness", r.AttributeValues["namespace"], addr)
	}
	rule := get(`aws_cloudwatch_metric_alarm.this["DDB-PITR-01"]`)
	require.Equal(t, "breaching", rule["treat_missing_data"], "a stopped run alarms")
	require.Equal(t, map[string]any{"Env": "dev", "RuleID": "DDB-PITR-01"}, rule["dimensions"])
	require.EqualValues(t, 3600, get(`aws_cloudwatch_metric_alarm.this["restore-time"]`)["threshold"])
	dr := get(`aws_cloudwatch_metric_alarm.this["dr-not-ready"]`)
	require.Equal(t, "DRNotReady", dr["metric_name"])
	require.Equal(t, map[string]any{"Env": "dev"}, dr["dimensions"])
	require.Equal(t, "breaching", dr["treat_missing_data"], "a stopped run alarms")
	require.EqualValues(t, 0, dr["threshold"])
	require.Equal(t, "GreaterThanThreshold", dr["comparison_operator"])
	require.Greater(t, alarms, 30, "an alarm per guideline rule plus the restore alarms")

	ex := readinessPlans.Plan(t, "readiness example")
	_, ok := ex.ResourcePlannedValuesMap["module.readiness.aws_lambda_function.this"]
	require.True(t, ok, "the example plans the readiness Lambda")
}

// TestPlanReadinessValidations: every validation of modules/dynamodb-readiness
// refuses its bad input, naming the rule and the fix.
func TestPlanReadinessValidations(t *testing.T) {
	t.Parallel()
	zip := harness.PlanZip(t)
	vars := func(over map[string]any) map[string]any {
		v := map[string]any{
			"env": "dev", "restore_table_arn": tableARN("dev", "order"), "readiness_zip_path": zip,
			"alarm_actions": []string{"arn:aws:sns:" + region + ":" + accountID + ":dev-example-alerts"},
		}
		for k, x := range over {
			v[k] = x
		}
		return v
	}
	harness.ExpectRefusals(t, "modules/dynamodb-readiness", []harness.Refusal{
		{Name: "DDB-NAME-01 env not lower case", Vars: vars(map[string]any{"env": "Dev"}), Want: []string{"DDB-NAME-01: env must be lower case letters and digits"}},
		{Name: "DDB-PITR-01 restore table of another env", Vars: vars(map[string]any{"restore_table_arn": tableARN("prod", "order")}), Want: []string{"DDB-PITR-01: restore_table_arn must be a table of the env"}},
		{Name: "DDB-PITR-01 zip not a zip", Vars: vars(map[string]any{"readiness_zip_path": "bin/readiness"}), Want: []string{"DDB-PITR-01: readiness_zip_path must be the zip", "make readiness-zip"}},
		{Name: "DDB-PITR-01 schedule not rate or cron", Vars: vars(map[string]any{"schedule_expression": "daily"}), Want: []string{"DDB-PITR-01: schedule_expression must be rate(...) or cron(...)"}},
		{Name: "DDB-PITR-01 restore alarm under a minute", Vars: vars(map[string]any{"restore_time_alarm_seconds": 30}), Want: []string{"DDB-PITR-01: restore_time_alarm_seconds must be between 60 and 86400"}},
		{Name: "DDB-PITR-01 restore alarm over a day", Vars: vars(map[string]any{"restore_time_alarm_seconds": 90000}), Want: []string{"DDB-PITR-01: restore_time_alarm_seconds must be between 60 and 86400"}},
		{Name: "DDB-MON-01 no rule IDs", Vars: vars(map[string]any{"rule_ids": []string{}}), Want: []string{"DDB-MON-01: rule_ids must list guideline rule IDs"}},
		{Name: "DDB-MON-01 not a rule ID", Vars: vars(map[string]any{"rule_ids": []string{"PITR"}}), Want: []string{"DDB-MON-01: rule_ids must list guideline rule IDs", "docs/guideline.md"}},
		{Name: "DDB-MON-01 nobody notified", Vars: vars(map[string]any{"alarm_actions": []string{}}), Want: []string{"DDB-MON-01: alarm_actions must list at least one SNS topic ARN"}},
		{Name: "DDB-MON-01 action not a topic", Vars: vars(map[string]any{"alarm_actions": []string{"arn:aws:lambda:" + region + ":" + accountID + ":function:x"}}), Want: []string{"DDB-MON-01: alarm_actions must list at least one SNS topic ARN"}},
		{Name: "DDB-MON-01 log retention not a Logs value", Vars: vars(map[string]any{"log_retention_days": 31}), Want: []string{"DDB-MON-01: log_retention_days must be a CloudWatch Logs retention value"}},
		{Name: "DDB-SEC-04 log key not a key ARN", Vars: vars(map[string]any{"log_kms_key_arn": "alias/logs"}), Want: []string{"DDB-SEC-04: log_kms_key_arn must be a KMS key ARN"}},
		{Name: "DDB-SEC-01 boundary not a policy", Vars: vars(map[string]any{"permissions_boundary_arn": "arn:aws:iam::" + accountID + ":role/x"}), Want: []string{"DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN"}},
	})
}
