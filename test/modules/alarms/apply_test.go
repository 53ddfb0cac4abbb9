package alarms

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/test/helpers/harness"
)

type checkReport struct {
	Findings []struct{ Resource, Rule, Status, Message string }
	Summary  struct{ Fail, Pass int }
}

func (r checkReport) status(resource, rule string) (string, string) {
	for _, f := range r.Findings {
		if f.Resource == resource && f.Rule == rule {
			return f.Status, f.Message
		}
	}
	return "", ""
}

func check(t *testing.T, table string) (checkReport, int) {
	t.Helper()
	out, _, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "check", "--table", table, "-o", "json")
	var rep checkReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep, code
}

// TestApplyBasicExample applies a table with its alarms and dashboard, reads
// them back with DescribeAlarms and GetDashboard, and runs dynops check.
func TestApplyBasicExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	product := harness.UniqueID()
	vars := map[string]any{"env": "dev", "product": product, "account_id": target.AccountID(t)}
	if target.OnEmulator() {
		vars["contributor_insights_enabled"] = false // moto: 500 Not Implemented
	}
	opts := target.ApplyProtected(t, "modules/dynamodb-alarms/examples/basic", vars)
	table := terraform.Output(t, opts, "table_name")
	topic := terraform.Output(t, opts, "sns_topic_arn")
	cw := cloudwatch.NewFromConfig(target.AWSConfig(t), awsclients.CloudWatchQueryProtocol)

	byName := map[string]cwtypes.MetricAlarm{}
	for _, prefix := range []string{table + "-", "dev-" + product + "-dynamodb-account-"} {
		p := cloudwatch.NewDescribeAlarmsPaginator(cw, &cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String(prefix)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			require.NoError(t, err)
			for _, a := range page.MetricAlarms {
				byName[aws.ToString(a.AlarmName)] = a
			}
		}
	}
	names := terraform.OutputMap(t, opts, "alarm_names")
	assert.Len(t, byName, len(names), "DescribeAlarms returns exactly the module's alarms")

	type want struct {
		metric, stat string
		dims         map[string]string
		threshold    float64
		period, eval int32
		missing      string
	}
	single := map[string]want{
		"read_throttle_events":               {"ReadThrottleEvents", "Sum", map[string]string{"TableName": table}, 0, 60, 5, "notBreaching"},
		"write_throttle_events":              {"WriteThrottleEvents", "Sum", map[string]string{"TableName": table}, 0, 60, 5, "notBreaching"},
		"gsi_read_throttle_events:gsi1":      {"ReadThrottleEvents", "Sum", map[string]string{"TableName": table, "GlobalSecondaryIndexName": "gsi1"}, 0, 60, 5, "notBreaching"},
		"gsi_write_throttle_events:gsi1":     {"WriteThrottleEvents", "Sum", map[string]string{"TableName": table, "GlobalSecondaryIndexName": "gsi1"}, 0, 60, 5, "notBreaching"},
		"latency:GetItem":                    {"SuccessfulRequestLatency", "Average", map[string]string{"TableName": table, "Operation": "GetItem"}, 25, 60, 10, "notBreaching"},
		"user_errors":                        {"UserErrors", "Sum", map[string]string{}, 10, 60, 10, "notBreaching"},
		"account_read_capacity_utilization":  {"AccountProvisionedReadCapacityUtilization", "Maximum", map[string]string{}, 80, 300, 2, "notBreaching"},
		"account_write_capacity_utilization": {"AccountProvisionedWriteCapacityUtilization", "Maximum", map[string]string{}, 80, 300, 2, "notBreaching"},
	}
	for key, w := range single {
		t.Run("DDB-MON-01 "+key, func(t *testing.T) {
			a, ok := byName[names[key]]
			require.True(t, ok, "alarm %s (%s) not found", key, names[key])
			assert.Equal(t, "AWS/DynamoDB", aws.ToString(a.Namespace))
			assert.Equal(t, w.metric, aws.ToString(a.MetricName))
			assert.Equal(t, w.stat, string(a.Statistic))
			got := map[string]string{}
			for _, d := range a.Dimensions {
				got[aws.ToString(d.Name)] = aws.ToString(d.Value)
			}
			assert.Equal(t, w.dims, got)
			assert.Equal(t, w.threshold, aws.ToFloat64(a.Threshold))
			assert.Equal(t, w.period, aws.ToInt32(a.Period))
			assert.Equal(t, w.eval, aws.ToInt32(a.EvaluationPeriods))
			assert.Equal(t, w.missing, aws.ToString(a.TreatMissingData))
			assert.Equal(t, cwtypes.ComparisonOperatorGreaterThanThreshold, a.ComparisonOperator)
			assert.Equal(t, []string{topic}, a.AlarmActions)
			assert.Equal(t, []string{topic}, a.OKActions)
		})
	}
	t.Run("DDB-MON-01 throttled_requests sums ThrottledRequests over operations", func(t *testing.T) {
		a, ok := byName[names["throttled_requests"]]
		require.True(t, ok)
		require.Len(t, a.Metrics, 11, "one expression and ten operations")
		ops := map[string]bool{}
		for _, q := range a.Metrics {
			if q.Expression != nil {
				assert.Equal(t, "SUM(METRICS())", aws.ToString(q.Expression))
				continue
			}
			assert.Equal(t, "ThrottledRequests", aws.ToString(q.MetricStat.Metric.MetricName))
			for _, d := range q.MetricStat.Metric.Dimensions {
				if aws.ToString(d.Name) == "Operation" {
					ops[aws.ToString(d.Value)] = true
				}
			}
		}
		assert.Len(t, ops, 10)
		assert.True(t, ops["GetItem"] && ops["TransactWriteItems"], "ops: %v", ops)
		assert.Equal(t, []string{topic}, a.AlarmActions)
	})

	t.Run("dashboard", func(t *testing.T) {
		d, err := cw.GetDashboard(ctx, &cloudwatch.GetDashboardInput{DashboardName: aws.String(terraform.Output(t, opts, "dashboard_name"))})
		require.NoError(t, err)
		assert.Equal(t, table, aws.ToString(d.DashboardName))
		var body struct {
			Widgets []struct {
				Type       string
				Properties struct {
					Title  string
					Alarms []string
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(aws.ToString(d.DashboardBody)), &body))
		var titles []string
		for _, w := range body.Widgets {
			titles = append(titles, w.Properties.Title)
			if w.Type == "alarm" {
				assert.Len(t, w.Properties.Alarms, len(names), "the alarm widget shows every alarm")
			}
		}
		for _, want := range []string{"Alarms of " + table, "Throttles", "Errors", "Latency", "Consumed capacity"} {
			assert.True(t, containsPrefix(titles, want), "dashboard has a %q widget: %v", want, titles)
		}
	})

	t.Run("DDB-MON-01 dynops check passes", func(t *testing.T) {
		rep, code := check(t, table)
		assert.Equal(t, 0, code)
		for _, res := range []string{table, table + "/index/gsi1"} {
			st, msg := rep.status(res, "DDB-MON-01")
			assert.Equal(t, "pass", st, "%s: %s", res, msg)
		}
	})
	t.Run("no drift after apply", func(t *testing.T) {
		assert.Equal(t, 0, terraform.PlanExitCode(t, opts), "a second plan must show no changes")
	})
}

// TestCheckFailsOnTableWithoutAlarms_DDB_MON_01: a table deployed without
// alarms fails dynops check with the rule ID.
func TestCheckFailsOnTableWithoutAlarms_DDB_MON_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	name := "dev-" + harness.UniqueID() + "-unwatched"
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("job_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("job_id"), KeyType: types.KeyTypeHash}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}) })
	require.NoError(t, dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 2*60e9))

	rep, code := check(t, name)
	assert.Equal(t, 1, code, "an error-level failure exits 1")
	st, msg := rep.status(name, "DDB-MON-01")
	assert.Equal(t, "fail", st)
	assert.Contains(t, msg, "no alarm on AWS/DynamoDB ThrottledRequests TableName="+name)
	assert.Contains(t, msg, "modules/dynamodb-alarms", "the finding says the fix")
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
