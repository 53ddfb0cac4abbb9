package alarms

import (
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const (
	module = "modules/dynamodb-alarms"
	table  = "prod-hoge-user"
	topic  = "arn:aws:sns:eu-west-1:123456789012:prod-hoge-dynamodb-alarms"
)

func baseVars() map[string]any {
	return map[string]any{
		"table_name":       table,
		"gsi_names":        []string{"gsi1"},
		"replica_regions":  []string{"eu-central-1"},
		"create_sns_topic": false,
		"sns_topic_arn":    topic,
	}
}

func with(overrides map[string]any) map[string]any {
	v := baseVars()
	for k, val := range overrides {
		if val == nil {
			delete(v, k)
			continue
		}
		v[k] = val
	}
	return v
}

// alarm is the planned shape of one alarm, as the tests compare it.
type alarm struct {
	Metric      string
	Dimensions  map[string]any
	Statistic   string
	Threshold   float64
	Period      float64
	Evaluations float64
	Datapoints  float64
	Missing     string
}

// plans are the package's offline plans that must succeed, planned together
// in one terraform run (harness.PlanGroup); each test reads its own case.
var plans = harness.NewPlanGroup(
	harness.PlanCase{Name: "table alarms", Dir: module, Vars: func(testing.TB) map[string]any { return baseVars() }},
	harness.PlanCase{Name: "key operations", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"key_operations": []string{"GetItem", "Query", "TransactWriteItems"}})
	}},
	harness.PlanCase{Name: "provisioned", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"billing_mode": "PROVISIONED"})
	}},
	harness.PlanCase{Name: "account alarms", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{"account_alarms_enabled": true})
	}},
	harness.PlanCase{Name: "overrides", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"alarms": map[string]any{
				"read_throttle_events": map[string]any{"threshold": 50, "evaluation_periods": 3},
				"latency":              map[string]any{"enabled": false},
				"replication_latency":  map[string]any{"treat_missing_data": "breaching", "period": 300},
			},
			"ok_actions_enabled": false,
		})
	}},
	harness.PlanCase{Name: "no topic given", Dir: module, Vars: func(testing.TB) map[string]any {
		v := baseVars()
		delete(v, "sns_topic_arn")
		delete(v, "create_sns_topic")
		v["account_id"] = "123456789012"
		return v
	}},
	harness.PlanCase{Name: "no topic given, own key", Dir: module, Vars: func(testing.TB) map[string]any {
		v := baseVars()
		delete(v, "sns_topic_arn")
		delete(v, "create_sns_topic")
		v["sns_kms_master_key_id"] = ownTopicKey
		return v
	}},
	harness.PlanCase{Name: "throttle causes", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"throttle_cause_alarms": map[string]any{"key_range": true, "max_on_demand": true, "account_limit": true},
			"alarms":                map[string]any{"key_range_throttle_events": map[string]any{"threshold": 5}},
		})
	}},
	harness.PlanCase{Name: "dashboard", Dir: module, Vars: func(testing.TB) map[string]any {
		return with(map[string]any{
			"stream_consumers": []map[string]any{{"function_name": table + "-consumer", "dlq_name": table + "-consumer-dlq"}},
		})
	}},
	harness.PlanCase{Name: "topic with its key", Dir: topicModule, Vars: func(testing.TB) map[string]any {
		return map[string]any{"name": "dev-hoge-dynamodb-alarms", "account_id": "123456789012", "alarm_name_prefix": "dev-hoge-"}
	}},
	harness.PlanCase{Name: "topic with the caller's key", Dir: topicModule, Vars: func(testing.TB) map[string]any {
		return map[string]any{"name": "dev-hoge-dynamodb-alarms", "account_id": "123456789012", "kms_key_arn": ownTopicKey}
	}},
)

func planAlarms(t *testing.T, name string) (*terraform.PlanStruct, map[string]map[string]any) {
	t.Helper()
	p := plans.Plan(t, name)
	out := map[string]map[string]any{}
	for addr, rc := range p.ResourcePlannedValuesMap {
		// The account-level alarms are in the submodule modules/account.
		if key, ok := strings.CutPrefix(strings.TrimPrefix(addr, "module.account[0]."), "aws_cloudwatch_metric_alarm.this["); ok {
			out[strings.Trim(strings.TrimSuffix(key, "]"), `"`)] = rc.AttributeValues
		}
	}
	return p, out
}

func shape(a map[string]any) alarm {
	dims, _ := a["dimensions"].(map[string]any)
	stat, _ := a["statistic"].(string)
	metric, _ := a["metric_name"].(string)
	return alarm{
		Metric: metric, Dimensions: dims, Statistic: stat,
		Threshold: a["threshold"].(float64), Period: num(a["period"]),
		Evaluations: a["evaluation_periods"].(float64), Datapoints: num(a["datapoints_to_alarm"]),
		Missing: a["treat_missing_data"].(string),
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// TestPlanTableAlarms_DDB_MON_01 pins every alarm of a table with a GSI and a
// replica to the documented defaults.
func TestPlanTableAlarms_DDB_MON_01(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "table alarms")
	tbl := map[string]any{"TableName": table}
	want := map[string]alarm{
		"read_throttle_events":             {"ReadThrottleEvents", tbl, "Sum", 0, 60, 5, 5, "notBreaching"},
		"write_throttle_events":            {"WriteThrottleEvents", tbl, "Sum", 0, 60, 5, 5, "notBreaching"},
		"gsi_read_throttle_events:gsi1":    {"ReadThrottleEvents", map[string]any{"TableName": table, "GlobalSecondaryIndexName": "gsi1"}, "Sum", 0, 60, 5, 5, "notBreaching"},
		"gsi_write_throttle_events:gsi1":   {"WriteThrottleEvents", map[string]any{"TableName": table, "GlobalSecondaryIndexName": "gsi1"}, "Sum", 0, 60, 5, 5, "notBreaching"},
		"latency:GetItem":                  {"SuccessfulRequestLatency", map[string]any{"TableName": table, "Operation": "GetItem"}, "Average", 25, 60, 10, 10, "notBreaching"},
		"latency:PutItem":                  {"SuccessfulRequestLatency", map[string]any{"TableName": table, "Operation": "PutItem"}, "Average", 40, 60, 10, 10, "notBreaching"},
		"latency:UpdateItem":               {"SuccessfulRequestLatency", map[string]any{"TableName": table, "Operation": "UpdateItem"}, "Average", 40, 60, 10, 10, "notBreaching"},
		"latency:Query":                    {"SuccessfulRequestLatency", map[string]any{"TableName": table, "Operation": "Query"}, "Average", 60, 60, 10, 10, "notBreaching"},
		"replication_latency:eu-central-1": {"ReplicationLatency", map[string]any{"TableName": table, "ReceivingRegion": "eu-central-1"}, "Average", 30000, 60, 10, 10, "ignore"},
		"throttled_requests":               {"", nil, "", 0, 0, 5, 5, "notBreaching"},
		"system_errors":                    {"", nil, "", 0, 0, 5, 5, "notBreaching"},
	}
	assert.ElementsMatch(t, keys(want), keys(alarms), "exactly these alarms for an on-demand table (no account alarms unless asked)")
	for key, w := range want {
		t.Run(key, func(t *testing.T) {
			a, ok := alarms[key]
			require.True(t, ok, "missing alarm %s", key)
			assert.Equal(t, w, shape(a))
			if w.Metric != "" {
				assert.Equal(t, "AWS/DynamoDB", a["namespace"])
			}
			assert.Equal(t, "GreaterThanThreshold", a["comparison_operator"])
			assert.Equal(t, []any{topic}, a["alarm_actions"], "alarm notifies the topic")
			assert.Equal(t, []any{topic}, a["ok_actions"], "recovery notifies the topic")
			assert.True(t, strings.HasPrefix(a["alarm_name"].(string), table+"-"), "alarm name starts with the table name: %s", a["alarm_name"])
			assert.Contains(t, a["alarm_description"], "DDB-MON-01")
		})
	}
}

// TestPlanPerOperationMetricMath_DDB_MON_01: ThrottledRequests and SystemErrors
// exist only per (TableName, Operation), so the alarm sums the key operations.
func TestPlanPerOperationMetricMath_DDB_MON_01(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "key operations")
	for key, metric := range map[string]string{"throttled_requests": "ThrottledRequests", "system_errors": "SystemErrors"} {
		t.Run(key, func(t *testing.T) {
			a := alarms[key]
			require.NotNil(t, a)
			assert.Empty(t, a["metric_name"], "a metric-math alarm has no top-level metric")
			queries := a["metric_query"].([]any)
			require.Len(t, queries, 4, "one expression and one metric per key operation")
			ops := []string{}
			for _, q := range queries {
				q := q.(map[string]any)
				if q["id"] == "e1" {
					assert.Equal(t, "SUM(METRICS())", q["expression"])
					assert.Equal(t, true, q["return_data"])
					continue
				}
				m := q["metric"].([]any)[0].(map[string]any)
				assert.Equal(t, "AWS/DynamoDB", m["namespace"])
				assert.Equal(t, metric, m["metric_name"])
				assert.Equal(t, "Sum", m["stat"])
				assert.EqualValues(t, 60, m["period"])
				dims := m["dimensions"].(map[string]any)
				assert.Equal(t, table, dims["TableName"])
				ops = append(ops, dims["Operation"].(string))
			}
			assert.ElementsMatch(t, []string{"GetItem", "Query", "TransactWriteItems"}, ops)
		})
	}
}

func TestPlanProvisionedCapacityAlarms_DDB_CAP_01(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "provisioned")
	for _, dim := range []string{"Read", "Write"} {
		a := alarms["consumed_"+strings.ToLower(dim)+"_capacity"]
		require.NotNil(t, a, "PROVISIONED adds consumed %s capacity", dim)
		assert.EqualValues(t, 80, a["threshold"])
		assert.EqualValues(t, 10, a["evaluation_periods"])
		stats := map[string]string{}
		for _, q := range a["metric_query"].([]any) {
			q := q.(map[string]any)
			if q["id"] == "e1" {
				assert.Equal(t, "100 * (m1 / PERIOD(m1)) / m2", q["expression"])
				continue
			}
			m := q["metric"].([]any)[0].(map[string]any)
			stats[m["metric_name"].(string)] = m["stat"].(string)
			assert.Equal(t, map[string]any{"TableName": table}, m["dimensions"])
		}
		assert.Equal(t, map[string]string{"Consumed" + dim + "CapacityUnits": "Sum", "Provisioned" + dim + "CapacityUnits": "Average"}, stats)
	}
}

func TestPlanAccountAlarmsOnlyWhenAsked_DDB_MON_01(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "account alarms")
	want := map[string]alarm{
		"user_errors":                        {"UserErrors", nil, "Sum", 10, 60, 10, 10, "notBreaching"},
		"account_read_capacity_utilization":  {"AccountProvisionedReadCapacityUtilization", nil, "Maximum", 80, 300, 2, 2, "notBreaching"},
		"account_write_capacity_utilization": {"AccountProvisionedWriteCapacityUtilization", nil, "Maximum", 80, 300, 2, 2, "notBreaching"},
	}
	for key, w := range want {
		a := alarms[key]
		require.NotNil(t, a, key)
		got := shape(a)
		if len(got.Dimensions) == 0 {
			got.Dimensions = nil // account metrics have no dimension
		}
		assert.Equal(t, w, got, key)
		assert.True(t, strings.HasPrefix(a["alarm_name"].(string), "prod-dynamodb-account-"), "account alarms are named per env: %s", a["alarm_name"])
	}
}

func TestPlanOverrides(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "overrides")
	r := shape(alarms["read_throttle_events"])
	assert.Equal(t, 50.0, r.Threshold)
	assert.Equal(t, 3.0, r.Evaluations)
	assert.Equal(t, 3.0, r.Datapoints, "datapoints follow evaluation periods when only those are overridden")
	assert.NotContains(t, alarms, "latency:GetItem", "latency alarms disabled")
	rep := shape(alarms["replication_latency:eu-central-1"])
	assert.Equal(t, "breaching", rep.Missing)
	assert.Equal(t, 300.0, rep.Period)
	assert.Empty(t, alarms["throttled_requests"]["ok_actions"])
}

// TestPlanCreatesTopicWhenNoneGiven_DDB_SEC_04: the topic the module
// creates is encrypted with a customer managed key (its own, through
// modules/alarm-topic, or the caller's), never left unencrypted.
func TestPlanCreatesTopicWhenNoneGiven_DDB_SEC_04(t *testing.T) {
	t.Parallel()
	p, _ := planAlarms(t, "no topic given")
	rc, ok := p.ResourcePlannedValuesMap["module.topic[0].aws_sns_topic.this"]
	require.True(t, ok, "a topic is created when sns_topic_arn is null")
	assert.Equal(t, table+"-alarms", rc.AttributeValues["name"])
	key, ok := p.ResourcePlannedValuesMap["module.topic[0].aws_kms_key.this[0]"]
	require.True(t, ok, "the topic gets a customer managed key")
	assert.Equal(t, true, key.AttributeValues["enable_key_rotation"])

	own, _ := planAlarms(t, "no topic given, own key")
	rc, ok = own.ResourcePlannedValuesMap["module.topic[0].aws_sns_topic.this"]
	require.True(t, ok)
	assert.Equal(t, ownTopicKey, rc.AttributeValues["kms_master_key_id"], "the caller's key encrypts the topic")
	_, ok = own.ResourcePlannedValuesMap["module.topic[0].aws_kms_key.this[0]"]
	assert.False(t, ok, "no key is created when the caller passes one")
}

func TestPlanDashboard_DDB_MON_01(t *testing.T) {
	t.Parallel()
	p, _ := planAlarms(t, "dashboard")
	rc, ok := p.ResourcePlannedValuesMap["aws_cloudwatch_dashboard.this[0]"]
	require.True(t, ok)
	assert.Equal(t, table, rc.AttributeValues["dashboard_name"])
	// The body holds the alarm ARNs, known only after apply: TestApplyBasicExample reads it back with GetDashboard.
}

// TestPlanValidations: bad input is refused with the rule ID and the fix.
func TestPlanValidations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		vars map[string]any
		rule string
		fix  string
	}{
		{"mandatory alarm disabled", with(map[string]any{"alarms": map[string]any{"throttled_requests": map[string]any{"enabled": false}}}), "DDB-MON-01", "raise its threshold"},
		{"unknown alarm kind", with(map[string]any{"alarms": map[string]any{"throttles": map[string]any{"threshold": 1}}}), "DDB-MON-01", "alarm kinds"},
		{"period not whole minutes", with(map[string]any{"alarms": map[string]any{"system_errors": map[string]any{"period": 90}}}), "DDB-MON-01", "multiple of 60"},
		{"negative threshold", with(map[string]any{"alarms": map[string]any{"user_errors": map[string]any{"threshold": -1}}}), "DDB-MON-01", ">= 0"},
		{"bad missing-data mode", with(map[string]any{"alarms": map[string]any{"user_errors": map[string]any{"treat_missing_data": "zero"}}}), "DDB-MON-01", "notBreaching"},
		{"eleven key operations", with(map[string]any{"key_operations": []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}}), "DDB-MON-01", "at most 10 metrics"},
		{"zero latency threshold", with(map[string]any{"latency_thresholds_ms": map[string]any{"GetItem": 0}}), "DDB-MON-01", "positive milliseconds"},
		{"table name not env-product-usage", with(map[string]any{"table_name": "Users"}), "DDB-NAME-01", "module.table.table_name"},
		{"topic not an ARN", with(map[string]any{"sns_topic_arn": "alerts"}), "DDB-MON-01", "arn:aws:sns"},
		{"no topic at all", with(map[string]any{"sns_topic_arn": nil}), "DDB-MON-01", "pass sns_topic_arn"},
		{"created topic without account or key", with(map[string]any{"sns_topic_arn": nil, "create_sns_topic": true}), "DDB-SEC-04", "set account_id to the 12-digit AWS account ID, or pass sns_kms_master_key_id"},
		{"created topic with a bad account", with(map[string]any{"sns_topic_arn": nil, "create_sns_topic": true, "account_id": "1234"}), "DDB-SEC-04", "or pass sns_topic_arn with create_sns_topic = false"},
		{"billing mode typo", with(map[string]any{"billing_mode": "ONDEMAND"}), "DDB-CAP-01", "PAY_PER_REQUEST"},
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, c := range cases {
		refusals = append(refusals, harness.Refusal{Name: c.rule + " " + c.name, Vars: c.vars, Want: []string{c.rule + ":", c.fix}})
	}
	harness.ExpectRefusals(t, module, refusals)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPlanGroupMatchesPlanAlone: a case planned in the group (one wrapper
// root, re-rooted) gives the same resources, planned values and changes as
// the same root planned alone, so the tests above assert on what a plan of
// the module would give.
func TestPlanGroupMatchesPlanAlone(t *testing.T) {
	t.Parallel()
	grouped := plans.Plan(t, "dashboard")
	require.True(t, plans.PlannedTogether("dashboard"), "the dashboard case must come from the grouped plan")
	alone := terraform.InitAndPlanAndShowWithStruct(t, harness.PlanOptions(t, module, with(map[string]any{
		"stream_consumers": []map[string]any{{"function_name": table + "-consumer", "dlq_name": table + "-consumer-dlq"}},
	})))
	require.NotEmpty(t, alone.ResourcePlannedValuesMap)
	assert.ElementsMatch(t, keys(alone.ResourcePlannedValuesMap), keys(grouped.ResourcePlannedValuesMap), "the same planned resources")
	assert.ElementsMatch(t, keys(alone.ResourceChangesMap), keys(grouped.ResourceChangesMap), "the same resource changes")
	for addr, rc := range alone.ResourcePlannedValuesMap {
		g, ok := grouped.ResourcePlannedValuesMap[addr]
		if !assert.True(t, ok, addr) {
			continue
		}
		assert.Equal(t, rc, g, "%s: planned values", addr)
	}
	for addr, rc := range alone.ResourceChangesMap {
		g, ok := grouped.ResourceChangesMap[addr]
		if !assert.True(t, ok, addr) {
			continue
		}
		assert.Equal(t, rc, g, "%s: change", addr)
	}
}
