package alarms

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanThrottleCauseAlarms_DDB_MON_01_DDB_CAP_04: with throttle_cause_alarms
// on, the table and each GSI get one alarm per cause and direction, on the
// metric DynamoDB publishes for that cause, each description naming the
// cause and its runbook section. Off by default: TestPlanTableAlarms_DDB_MON_01
// pins the default set, which has none of them.
func TestPlanThrottleCauseAlarms_DDB_MON_01_DDB_CAP_04(t *testing.T) {
	t.Parallel()
	_, alarms := planAlarms(t, "throttle causes")
	causes := []struct{ cause, metric, slug, runbook, says string }{
		{"key_range", "KeyRangeThroughput", "key-range", "runbooks/throttling.md#hot-key", "hot key"},
		{"max_on_demand", "MaxOnDemandThroughput", "max-on-demand", "runbooks/throttling.md#on-demand-maximum", "on-demand maximum"},
		{"account_limit", "AccountLimit", "account-limit", "runbooks/throttling.md#account-quota", "Service Quotas"},
	}
	n := 0
	for _, c := range causes {
		for _, dim := range []string{"read", "write"} {
			for _, index := range []string{"", "gsi1"} {
				key, name := c.cause+"_throttle_events:"+dim, table+"-"+dim+"-"+c.slug+"-throttle-events"
				dims := map[string]any{"TableName": table}
				if index != "" {
					key, name = c.cause+"_throttle_events:"+index+":"+dim, table+"-"+index+"-"+dim+"-"+c.slug+"-throttle-events"
					dims["GlobalSecondaryIndexName"] = index
				}
				t.Run(key, func(t *testing.T) {
					a, ok := alarms[key]
					require.True(t, ok, "missing alarm %s", key)
					threshold := 0.0
					if c.cause == "key_range" {
						threshold = 5 // the override
					}
					assert.Equal(t, alarm{strings.ToUpper(dim[:1]) + dim[1:] + c.metric + "ThrottleEvents", dims, "Sum", threshold, 60, 5, 5, "notBreaching"}, shape(a))
					assert.Equal(t, name, a["alarm_name"])
					assert.Contains(t, a["alarm_description"], c.runbook)
					assert.Contains(t, a["alarm_description"], c.says)
					assert.Equal(t, []any{topic}, a["alarm_actions"])
				})
				n++
			}
		}
	}
	cause := 0
	for key := range alarms {
		if strings.Contains(key, "key_range_") || strings.Contains(key, "max_on_demand_") || strings.Contains(key, "account_limit_") {
			cause++
		}
	}
	assert.Equal(t, n, cause, "one alarm per cause, direction and table or GSI")
	assert.Contains(t, alarms["max_on_demand_throttle_events:read"]["alarm_description"], "DDB-CAP-04")
}
