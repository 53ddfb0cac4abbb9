package guideline

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
)

// TestCostCeiling_DDB_CAP_04: an on-demand table in a protected env needs
// a maximum for reads and writes, alarmed when monitoring is read; outside
// protected envs and on provisioned tables the rule passes; a reasoned
// exception tag relaxes it. (Pure evaluation: moto 5.2.1 does not keep a
// table's OnDemandThroughput, so the capped path cannot be read back from
// the emulator.)
func TestCostCeiling_DDB_CAP_04(t *testing.T) {
	alarm := func(metric string) Alarm {
		return Alarm{Name: "prod-hoge-user-" + metric, Actions: 1, Metrics: []Metric{{Namespace: "AWS/DynamoDB", Name: metric, Dimensions: map[string]string{"TableName": "prod-hoge-user"}}}}
	}
	cases := []struct {
		name   string
		mutate func(*TableState)
		want   Status
		says   string
	}{
		{"capped, monitoring not read", func(*TableState) {}, Pass, "4000 reads and 1000 writes"},
		{"not protected, no cap", func(s *TableState) { s.Protected, s.Table.OnDemandThroughput = false, nil }, Pass, "not in a protected env"},
		{"provisioned, no cap", func(s *TableState) {
			s.Table.OnDemandThroughput = nil
			s.Table.BillingModeSummary.BillingMode = types.BillingModeProvisioned
		}, Pass, "DDB-CAP-01"},
		{"no cap", func(s *TableState) { s.Table.OnDemandThroughput = nil }, Fail, "without a maximum for reads and writes"},
		{"read cap only", func(s *TableState) { s.Table.OnDemandThroughput.MaxWriteRequestUnits = aws.Int64(-1) }, Fail, "for writes: no cost ceiling"},
		{"no cap, reasoned exception", func(s *TableState) {
			s.Table.OnDemandThroughput = nil
			s.Tags["dynops:exception:DDB-CAP-04"] = "launch week traffic unknown OPS-12"
		}, Exception, ""},
		{"no cap, placeholder exception", func(s *TableState) {
			s.Table.OnDemandThroughput = nil
			s.Tags["dynops:exception:DDB-CAP-04"] = "TODO"
		}, Fail, "placeholder"},
		{"capped and alarmed", func(s *TableState) {
			s.Monitoring = &Monitoring{Alarms: []Alarm{alarm("ReadMaxOnDemandThroughputThrottleEvents"), alarm("WriteMaxOnDemandThroughputThrottleEvents")}}
		}, Pass, "its throttles alarmed"},
		{"capped, write ceiling not alarmed", func(s *TableState) {
			s.Monitoring = &Monitoring{Alarms: []Alarm{alarm("ReadMaxOnDemandThroughputThrottleEvents")}}
		}, Fail, "no alarm on AWS/DynamoDB WriteMaxOnDemandThroughputThrottleEvents"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := compliant()
			c.mutate(&s)
			fs := []Finding{}
			for _, f := range Evaluate(s) {
				if f.Rule == Cap04 {
					fs = append(fs, f)
				}
			}
			if !assert.Len(t, fs, 1, "one DDB-CAP-04 finding per table") {
				return
			}
			assert.Equal(t, c.want, fs[0].Status, fs[0].Message)
			assert.Contains(t, fs[0].Message, c.says)
			if c.want == Fail {
				assert.True(t, fs[0].Failing(), "an error: fails dynops check")
				assert.True(t, strings.Contains(fs[0].Message, "on_demand_throughput") || strings.Contains(fs[0].Message, "throttle_cause_alarms") || strings.Contains(fs[0].Message, "DDB-EXC-01"), "names the fix: %s", fs[0].Message)
			}
		})
	}
}
