package streamconsumer

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const (
	module    = "modules/stream-consumer"
	name      = "prod-hoge-user-consumer"
	streamArn = "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user/stream/2026-11-21T00:00:00.000"
	topic     = "arn:aws:sns:eu-west-1:123456789012:prod-hoge-dynamodb-alarms"
)

func baseVars(t testing.TB) map[string]any {
	return map[string]any{"name": name, "stream_arn": streamArn, "filename": harness.PlanZip(t), "alarm_sns_topic_arn": topic}
}

func with(t testing.TB, overrides map[string]any) map[string]any {
	v := baseVars(t)
	for k, val := range overrides {
		if val == nil {
			delete(v, k)
			continue
		}
		v[k] = val
	}
	return v
}

// plans are the package's offline plans that must succeed, planned together
// in one terraform run (harness.PlanGroup); each test reads its own case.
var plans = harness.NewPlanGroup(
	harness.PlanCase{Name: "filtered", Dir: module, Vars: func(t testing.TB) map[string]any {
		return with(t, map[string]any{"filter_patterns": []string{`{"eventName":["INSERT"]}`}})
	}},
	harness.PlanCase{Name: "esm options", Dir: module, Vars: func(t testing.TB) map[string]any {
		return with(t, map[string]any{
			"report_batch_item_failures": false, "maximum_retry_attempts": 0, "maximum_record_age_in_seconds": 600,
			"iterator_age_warning_ms": 60000, "iterator_age_critical_ms": 300000, "starting_position": "TRIM_HORIZON", "batch_size": 10, "parallelization_factor": 4,
		})
	}},
	harness.PlanCase{Name: "defaults", Dir: module, Vars: func(t testing.TB) map[string]any { return baseVars(t) }},
	harness.PlanCase{Name: "existing function", Dir: module, Vars: func(t testing.TB) map[string]any {
		return with(t, map[string]any{"filename": nil, "existing_function": map[string]any{"arn": existingFunction, "role_name": "orders-projector"}})
	}},
)

// existingFunction is the function of the "existing function" case.
const existingFunction = "arn:aws:lambda:eu-west-1:123456789012:function:orders-projector"

func resource(t *testing.T, p *terraform.PlanStruct, addr string) map[string]any {
	t.Helper()
	rc, ok := p.ResourcePlannedValuesMap[addr]
	require.True(t, ok, "plan has no %s", addr)
	return rc.AttributeValues
}

func TestPlanEventSourceMapping_DDB_STREAM_04(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "filtered")
	esm := resource(t, p, "aws_lambda_event_source_mapping.this")

	assert.Equal(t, streamArn, esm["event_source_arn"])
	assert.Equal(t, true, esm["bisect_batch_on_function_error"], "bisect: a poison record is isolated, not retried with its batch")
	assert.EqualValues(t, 3, esm["maximum_retry_attempts"], "bounded retries (never -1)")
	assert.EqualValues(t, 3600, esm["maximum_record_age_in_seconds"], "bounded record age (never -1)")
	assert.Equal(t, []any{"ReportBatchItemFailures"}, esm["function_response_types"])
	assert.Equal(t, "LATEST", esm["starting_position"])
	assert.EqualValues(t, 100, esm["batch_size"])
	assert.EqualValues(t, 1, esm["parallelization_factor"])
	dest := esm["destination_config"].([]any)[0].(map[string]any)["on_failure"].([]any)[0].(map[string]any)
	assert.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:"+name+"-dlq", dest["destination_arn"], "failed records go to the DLQ")
	filters := esm["filter_criteria"].([]any)[0].(map[string]any)["filter"].([]any)
	require.Len(t, filters, 1)
	assert.JSONEq(t, `{"eventName":["INSERT"]}`, filters[0].(map[string]any)["pattern"].(string))

	t.Run("DLQ encrypted, kept 14 days", func(t *testing.T) {
		q := resource(t, p, "aws_sqs_queue.dlq")
		assert.Equal(t, name+"-dlq", q["name"])
		assert.EqualValues(t, 1209600, q["message_retention_seconds"])
		assert.Equal(t, true, q["sqs_managed_sse_enabled"])
	})
	t.Run("function: Go on provided.al2023 arm64", func(t *testing.T) {
		fn := resource(t, p, "aws_lambda_function.this[0]")
		assert.Equal(t, name, fn["function_name"])
		assert.Equal(t, "provided.al2023", fn["runtime"])
		assert.Equal(t, "bootstrap", fn["handler"])
		assert.Equal(t, []any{"arm64"}, fn["architectures"])
		assert.NotEmpty(t, fn["source_code_hash"])
		lg := resource(t, p, "aws_cloudwatch_log_group.this[0]")
		assert.Equal(t, "/aws/lambda/"+name, lg["name"])
		assert.EqualValues(t, 30, lg["retention_in_days"])
	})
}

func TestPlanESMOptions(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "esm options")
	esm := resource(t, p, "aws_lambda_event_source_mapping.this")
	assert.Empty(t, esm["function_response_types"])
	assert.EqualValues(t, 0, esm["maximum_retry_attempts"])
	assert.EqualValues(t, 600, esm["maximum_record_age_in_seconds"])
	assert.Equal(t, "TRIM_HORIZON", esm["starting_position"])
	assert.EqualValues(t, 10, esm["batch_size"])
	assert.EqualValues(t, 4, esm["parallelization_factor"])
	assert.Equal(t, true, esm["bisect_batch_on_function_error"], "bisect is not optional")
	filters, _ := esm["filter_criteria"].([]any)
	assert.Empty(t, filters, "no filter: every record")
}

// TestPlanLeastPrivilege_DDB_SEC_01: the role may read this stream, send to
// this DLQ and write its log group; nothing else.
func TestPlanLeastPrivilege_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "defaults")
	pol := resource(t, p, "aws_iam_role_policy.consumer")
	doc, known := pol["policy"].(string)
	require.True(t, known, "the policy is known at plan time, so a reviewer sees it")
	var d struct {
		Statement []struct {
			Sid      string
			Action   any
			Resource any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d))
	got := map[string][2]string{}
	for _, s := range d.Statement {
		got[s.Sid] = [2]string{flat(s.Action), flat(s.Resource)}
	}
	assert.Equal(t, [2]string{"dynamodb:DescribeStream,dynamodb:GetRecords,dynamodb:GetShardIterator", streamArn}, got["ReadTheStream"])
	// ListStreams has no resource type: it needs "*" (test/modules/access's escalation matrix asks the IAM evaluator).
	assert.Equal(t, [2]string{"dynamodb:ListStreams", "*"}, got["ListStreams"])
	assert.Equal(t, [2]string{"sqs:SendMessage", "arn:aws:sqs:eu-west-1:123456789012:" + name + "-dlq"}, got["SendFailedRecordsToTheDLQ"])
	assert.Equal(t, [2]string{"logs:CreateLogStream,logs:PutLogEvents", "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/" + name + ":*"}, got["WriteItsLogs"])
	assert.Contains(t, got, "DenyOutsideDocumentedSet", "DDB-SEC-01: the role is capped to its documented set")
	assert.Len(t, got, 5, "no other statement")
}

func flat(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = e.(string)
		}
		sort.Strings(s)
		return strings.Join(s, ",")
	}
	return ""
}

// TestPlanExistingFunction: no function, role or log group is created; the
// given role gets the consumer policy.
func TestPlanExistingFunction(t *testing.T) {
	t.Parallel()
	fn := existingFunction
	p := plans.Plan(t, "existing function")
	for addr := range p.ResourcePlannedValuesMap {
		assert.NotContains(t, addr, "aws_lambda_function", "no function is built")
		assert.NotContains(t, addr, "aws_iam_role.this", "no role is created")
	}
	assert.Equal(t, fn, resource(t, p, "aws_lambda_event_source_mapping.this")["function_name"])
	assert.Equal(t, "orders-projector", resource(t, p, "aws_iam_role_policy.consumer")["role"])
	assert.Equal(t, map[string]any{"FunctionName": "orders-projector"}, resource(t, p, `aws_cloudwatch_metric_alarm.this["errors"]`)["dimensions"])
}

func TestPlanAlarms_DDB_STREAM_05(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "defaults")
	type alarm struct {
		Namespace, Metric, Dim, Stat string
		Threshold, Period, Evals, DP float64
		Missing                      string
	}
	want := map[string]alarm{
		"iterator_age_warning":  {"AWS/Lambda", "IteratorAge", "FunctionName=" + name, "Maximum", 300000, 60, 5, 5, "notBreaching"},
		"iterator_age_critical": {"AWS/Lambda", "IteratorAge", "FunctionName=" + name, "Maximum", 1800000, 60, 3, 3, "notBreaching"},
		"errors":                {"AWS/Lambda", "Errors", "FunctionName=" + name, "Sum", 0, 60, 5, 3, "notBreaching"},
		"dlq_visible":           {"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName=" + name + "-dlq", "Maximum", 0, 60, 1, 1, "notBreaching"},
		"dlq_oldest_message":    {"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName=" + name + "-dlq", "Maximum", 259200, 300, 1, 1, "notBreaching"},
	}
	for key, w := range want {
		t.Run(key, func(t *testing.T) {
			a := resource(t, p, `aws_cloudwatch_metric_alarm.this["`+key+`"]`)
			var dim string
			for k, v := range a["dimensions"].(map[string]any) {
				dim = k + "=" + v.(string)
			}
			got := alarm{a["namespace"].(string), a["metric_name"].(string), dim, a["statistic"].(string),
				a["threshold"].(float64), a["period"].(float64), a["evaluation_periods"].(float64), a["datapoints_to_alarm"].(float64), a["treat_missing_data"].(string)}
			assert.Equal(t, w, got)
			assert.Equal(t, "GreaterThanThreshold", a["comparison_operator"])
			assert.Equal(t, []any{topic}, a["alarm_actions"])
			assert.Equal(t, []any{topic}, a["ok_actions"])
			assert.Equal(t, name+"-"+strings.ReplaceAll(key, "_", "-"), a["alarm_name"])
			assert.Contains(t, a["alarm_description"], "DDB-STREAM-05")
		})
	}
	assert.Less(t, want["iterator_age_critical"].Threshold, 24*3600*1000.0/10, "critical IteratorAge is well below the 24 h stream retention")
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
		{"infinite retries", with(t, map[string]any{"maximum_retry_attempts": -1}), "DDB-STREAM-04", "0 to 10000"},
		{"infinite record age", with(t, map[string]any{"maximum_record_age_in_seconds": -1}), "DDB-STREAM-04", "60 to 86400"},
		{"record age beyond stream retention", with(t, map[string]any{"maximum_record_age_in_seconds": 604800}), "DDB-STREAM-04", "24 h"},
		{"not a stream ARN", with(t, map[string]any{"stream_arn": "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"}), "DDB-STREAM-04", "module.table.stream_arn"},
		{"neither zip nor function", with(t, map[string]any{"filename": nil}), "DDB-STREAM-03", "exactly one of filename"},
		{"both zip and function", with(t, map[string]any{"existing_function": map[string]any{"arn": "arn:aws:lambda:eu-west-1:123456789012:function:f", "role_name": "f"}}), "DDB-STREAM-03", "exactly one of filename"},
		{"bad filter JSON", with(t, map[string]any{"filter_patterns": []string{"eventName=INSERT"}}), "DDB-STREAM-03", "jsonencode"},
		{"critical below warning", with(t, map[string]any{"iterator_age_critical_ms": 60000}), "DDB-STREAM-05", "above iterator_age_warning_ms"},
		{"critical above record age", with(t, map[string]any{"iterator_age_critical_ms": 4000000}), "DDB-STREAM-05", "below maximum_record_age_in_seconds"},
		{"DLQ kept 4 days, alarm at 5", with(t, map[string]any{"dlq_message_retention_seconds": 345600, "dlq_oldest_message_age_seconds": 432000}), "DDB-STREAM-05", "before messages are deleted"},
		{"DLQ retention over 14 days", with(t, map[string]any{"dlq_message_retention_seconds": 1209601}), "DDB-STREAM-05", "14-day default"},
		{"capitalised name", with(t, map[string]any{"name": "Prod_Consumer"}), "DDB-NAME-01", "lower case words"},
		{"existing function by an IAM role ARN", with(t, map[string]any{"filename": nil, "existing_function": map[string]any{"arn": "arn:aws:iam::123456789012:role/f", "role_name": "f"}}), "DDB-STREAM-03", "arn:aws:lambda:REGION:ACCOUNT:function:NAME"},
		{"starting position AT_TIMESTAMP", with(t, map[string]any{"starting_position": "AT_TIMESTAMP"}), "DDB-STREAM-04", "starting_position must be LATEST or TRIM_HORIZON"},
		{"batch size 0", with(t, map[string]any{"batch_size": 0}), "DDB-STREAM-04", "batch_size must be 1 to 10000"},
		{"batch size 10001", with(t, map[string]any{"batch_size": 10001}), "DDB-STREAM-04", "batch_size must be 1 to 10000"},
		{"parallelization factor 0", with(t, map[string]any{"parallelization_factor": 0}), "DDB-STREAM-04", "parallelization_factor must be 1 to 10"},
		{"parallelization factor 11", with(t, map[string]any{"parallelization_factor": 11}), "DDB-STREAM-04", "parallelization_factor must be 1 to 10"},
		{"alarm topic by an SQS ARN", with(t, map[string]any{"alarm_sns_topic_arn": "arn:aws:sqs:eu-west-1:123456789012:q"}), "DDB-STREAM-05", "arn:aws:sns:REGION:ACCOUNT:NAME"},
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, c := range cases {
		refusals = append(refusals, harness.Refusal{Name: c.rule + " " + c.name, Vars: c.vars, Want: []string{c.rule + ":", c.fix}})
	}
	harness.ExpectRefusals(t, module, refusals)
}
