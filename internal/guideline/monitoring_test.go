package guideline

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const monTable = "prod-hoge-user"

// monState is a table with streams and a GSI, and the given monitoring.
func monState(m *Monitoring) TableState {
	return TableState{
		Table: types.TableDescription{
			TableName:              aws.String(monTable),
			StreamSpecification:    &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("gsi1")}},
		},
		Monitoring: m,
	}
}

func ddbAlarm(name, metric string, dims map[string]string) Alarm {
	return Alarm{Name: name, Actions: 1, Metrics: []Metric{{Namespace: "AWS/DynamoDB", Name: metric, Dimensions: dims}}}
}

// fullAlarms is what modules/dynamodb-alarms and modules/stream-consumer create.
func fullAlarms() []Alarm {
	gsi := map[string]string{"TableName": monTable, "GlobalSecondaryIndexName": "gsi1"}
	return []Alarm{
		// ThrottledRequests exists only per operation: metric math over them.
		{Name: monTable + "-throttled-requests", Actions: 1, Metrics: []Metric{
			{Namespace: "AWS/DynamoDB", Name: "ThrottledRequests", Dimensions: map[string]string{"TableName": monTable, "Operation": "GetItem"}},
			{Namespace: "AWS/DynamoDB", Name: "ThrottledRequests", Dimensions: map[string]string{"TableName": monTable, "Operation": "PutItem"}},
		}},
		ddbAlarm(monTable+"-gsi1-read", "ReadThrottleEvents", gsi),
		ddbAlarm(monTable+"-gsi1-write", "WriteThrottleEvents", gsi),
		{Name: "c-iterator-age", Actions: 1, Metrics: []Metric{{Namespace: "AWS/Lambda", Name: "IteratorAge", Dimensions: map[string]string{"FunctionName": "c"}}}},
		{Name: "c-dlq", Actions: 1, Metrics: []Metric{{Namespace: "AWS/SQS", Name: "ApproximateNumberOfMessagesVisible", Dimensions: map[string]string{"QueueName": "c-dlq"}}}},
	}
}

func goodConsumer() Consumer {
	return Consumer{
		UUID: "u1", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:c", Bisect: true,
		MaxRetries: aws.Int32(3), MaxRecordAge: aws.Int32(3600), OnFailureArn: "arn:aws:sqs:eu-west-1:123456789012:c-dlq",
	}
}

// findings returns the monitoring findings by resource and rule.
func findings(s TableState) map[string]Finding {
	out := map[string]Finding{}
	for _, f := range Evaluate(s) {
		switch f.Rule {
		case Mon01, Stream04, Stream05:
			out[f.Resource+" "+f.Rule] = f
		}
	}
	return out
}

func TestMonitoringAllPass(t *testing.T) {
	fs := findings(monState(&Monitoring{Alarms: fullAlarms(), Consumers: []Consumer{goodConsumer()}}))
	require.Len(t, fs, 4)
	for k, f := range fs {
		assert.Equal(t, Pass, f.Status, "%s: %s", k, f.Message)
	}
	assert.Contains(t, fs[monTable+" DDB-MON-01"].Message, monTable+"-throttled-requests")
}

func TestMonitoringNotGatheredIsNotEvaluated(t *testing.T) {
	assert.Empty(t, findings(monState(nil)), "callers that do not gather monitoring get no monitoring findings")
}

func TestMON01(t *testing.T) {
	t.Run("DDB-MON-01 no alarms at all", func(t *testing.T) {
		fs := findings(monState(&Monitoring{}))
		f := fs[monTable+" DDB-MON-01"]
		assert.Equal(t, Fail, f.Status)
		assert.True(t, f.Failing(), "error level: check exits 1")
		assert.Contains(t, f.Message, "no alarm on AWS/DynamoDB ThrottledRequests TableName="+monTable)
		assert.Contains(t, f.Message, "modules/dynamodb-alarms")
		g := fs[monTable+"/index/gsi1 DDB-MON-01"]
		assert.Equal(t, Fail, g.Status)
		assert.Contains(t, g.Message, "ReadThrottleEvents")
		assert.Contains(t, g.Message, "WriteThrottleEvents")
	})
	t.Run("DDB-MON-01 alarm without actions", func(t *testing.T) {
		alarms := fullAlarms()
		alarms[0].Actions = 0
		f := findings(monState(&Monitoring{Alarms: alarms}))[monTable+" DDB-MON-01"]
		assert.Equal(t, Fail, f.Status)
		assert.Contains(t, f.Message, "nobody is notified")
	})
	t.Run("DDB-MON-01 another table's alarm does not count", func(t *testing.T) {
		alarms := []Alarm{ddbAlarm("x", "ThrottledRequests", map[string]string{"TableName": "prod-hoge-order", "Operation": "GetItem"})}
		assert.Equal(t, Fail, findings(monState(&Monitoring{Alarms: alarms}))[monTable+" DDB-MON-01"].Status)
	})
	t.Run("DDB-MON-01 GSI with only the read alarm", func(t *testing.T) {
		alarms := fullAlarms()
		alarms = append(alarms[:2], alarms[3:]...) // drop the GSI write alarm
		g := findings(monState(&Monitoring{Alarms: alarms}))[monTable+"/index/gsi1 DDB-MON-01"]
		assert.Equal(t, Fail, g.Status)
		assert.Contains(t, g.Message, "WriteThrottleEvents")
		assert.NotContains(t, g.Message, "ReadThrottleEvents")
	})
	t.Run("DDB-MON-01 exception tag", func(t *testing.T) {
		s := monState(&Monitoring{})
		s.Tags = map[string]string{ExceptionTagPrefix + Mon01: "scratch table"}
		f := findings(s)[monTable+" DDB-MON-01"]
		assert.Equal(t, Exception, f.Status)
		assert.Equal(t, "scratch table", f.Reason)
	})
}

func TestSTREAM04(t *testing.T) {
	res := monTable + "/consumer/c DDB-STREAM-04"
	cases := []struct {
		name string
		edit func(*Consumer)
		want string
	}{
		{"no bisect", func(c *Consumer) { c.Bisect = false }, "BisectBatchOnFunctionError is off"},
		{"infinite retries", func(c *Consumer) { c.MaxRetries = aws.Int32(-1) }, "MaximumRetryAttempts is infinite"},
		{"retries unset", func(c *Consumer) { c.MaxRetries = nil }, "MaximumRetryAttempts is infinite"},
		{"infinite record age", func(c *Consumer) { c.MaxRecordAge = aws.Int32(-1) }, "MaximumRecordAgeInSeconds is infinite"},
		{"no DLQ", func(c *Consumer) { c.OnFailureArn = "" }, "no on-failure SQS destination"},
		{"SNS destination is not a DLQ", func(c *Consumer) { c.OnFailureArn = "arn:aws:sns:eu-west-1:123456789012:t" }, "no on-failure SQS destination"},
	}
	for _, tc := range cases {
		t.Run("DDB-STREAM-04 "+tc.name, func(t *testing.T) {
			c := goodConsumer()
			tc.edit(&c)
			f := findings(monState(&Monitoring{Alarms: fullAlarms(), Consumers: []Consumer{c}}))[res]
			assert.Equal(t, Fail, f.Status)
			assert.True(t, f.Failing())
			assert.Contains(t, f.Message, tc.want)
			assert.Contains(t, f.Message, "modules/stream-consumer")
		})
	}
	// Bounded is any non-negative count: 0 retries (send a failed batch to
	// the DLQ at once) is the strictest setting, not an infinite one.
	for _, retries := range []int32{0, 1, 10000} {
		t.Run(fmt.Sprintf("DDB-STREAM-04 %d retries is bounded", retries), func(t *testing.T) {
			c := goodConsumer()
			c.MaxRetries = aws.Int32(retries)
			f := findings(monState(&Monitoring{Alarms: fullAlarms(), Consumers: []Consumer{c}}))[res]
			assert.Equal(t, Pass, f.Status, f.Message)
			assert.Contains(t, f.Message, fmt.Sprintf("%d retries", retries))
		})
	}
	t.Run("DDB-STREAM-04 stream without consumer passes", func(t *testing.T) {
		f := findings(monState(&Monitoring{Alarms: fullAlarms()}))[monTable+" DDB-STREAM-04"]
		assert.Equal(t, Pass, f.Status)
		assert.Contains(t, f.Message, "no Lambda consumer")
	})
	t.Run("DDB-STREAM-04 streams off: not evaluated", func(t *testing.T) {
		s := monState(&Monitoring{Alarms: fullAlarms(), Consumers: []Consumer{goodConsumer()}})
		s.Table.StreamSpecification = nil
		for k := range findings(s) {
			assert.NotContains(t, k, "DDB-STREAM")
		}
	})
}

func TestSTREAM05(t *testing.T) {
	res := monTable + "/consumer/c DDB-STREAM-05"
	t.Run("DDB-STREAM-05 no IteratorAge alarm", func(t *testing.T) {
		alarms := fullAlarms()[:3]
		alarms = append(alarms, fullAlarms()[4]) // DLQ alarm only
		f := findings(monState(&Monitoring{Alarms: alarms, Consumers: []Consumer{goodConsumer()}}))[res]
		assert.Equal(t, Fail, f.Status)
		assert.Contains(t, f.Message, "no alarm on AWS/Lambda IteratorAge FunctionName=c")
	})
	t.Run("DDB-STREAM-05 no DLQ depth alarm", func(t *testing.T) {
		f := findings(monState(&Monitoring{Alarms: fullAlarms()[:4], Consumers: []Consumer{goodConsumer()}}))[res]
		assert.Equal(t, Fail, f.Status)
		assert.Contains(t, f.Message, "ApproximateNumberOfMessagesVisible QueueName=c-dlq")
	})
}

func TestConsumerFunctionName(t *testing.T) {
	assert.Equal(t, "c", Consumer{FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:c"}.FunctionName())
	assert.Equal(t, "c", Consumer{FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:c:live"}.FunctionName())
	assert.Equal(t, "c", Consumer{FunctionArn: "c"}.FunctionName())
}
