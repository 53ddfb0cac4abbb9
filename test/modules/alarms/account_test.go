package alarms

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

const accountModule = "modules/dynamodb-alarms/modules/account"

// TestPlanAccountAlarmsValidations: every validation message of the
// account-level alarms' submodule (modules/dynamodb-stack calls it on its
// own, module.account_alarms), with its rule and its fix.
func TestPlanAccountAlarmsValidations(t *testing.T) {
	t.Parallel()
	v := func(over map[string]any) map[string]any {
		out := map[string]any{"name_prefix": "prod-dynamodb-account", "sns_topic_arn": topic}
		for k, x := range over {
			out[k] = x
		}
		return out
	}
	harness.ExpectRefusals(t, accountModule, []harness.Refusal{
		{Name: "DDB-MON-01 name prefix with a space", Vars: v(map[string]any{"name_prefix": "prod dynamodb"}), Want: []string{"DDB-MON-01: name_prefix must be 1 to 200 of a-z A-Z 0-9 _ . -", `"prod-dynamodb-account"`}},
		{Name: "DDB-MON-01 topic not an ARN", Vars: v(map[string]any{"sns_topic_arn": "prod-hoge-dynamodb-alarms"}), Want: []string{"DDB-MON-01: sns_topic_arn must be an SNS topic ARN", "alarms must notify someone"}},
	})
}
