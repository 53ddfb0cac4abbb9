package alarms

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const (
	topicModule = "modules/alarm-topic"
	ownTopicKey = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
)

// TestPlanAlarmTopicEncrypted_DDB_SEC_04: the alarm topic is encrypted with a
// rotated customer managed key whose policy lets the account administer it
// and lets CloudWatch use it only for this account's alarms (CloudWatch
// cannot publish to a topic under alias/aws/sns).
func TestPlanAlarmTopicEncrypted_DDB_SEC_04(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "topic with its key")
	key, ok := p.ResourcePlannedValuesMap["aws_kms_key.this[0]"]
	require.True(t, ok, "a key is created")
	assert.Equal(t, true, key.AttributeValues["enable_key_rotation"])
	var doc struct {
		Statement []struct {
			Sid       string
			Principal map[string]any
			Action    any
			Condition map[string]map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(key.AttributeValues["policy"].(string)), &doc))
	bySid := map[string]int{}
	for i, s := range doc.Statement {
		bySid[s.Sid] = i
		assert.NotEqual(t, "*", s.Principal["AWS"], "no statement for every principal")
	}
	require.Contains(t, bySid, "AccountAdministersTheKey")
	assert.Equal(t, "arn:aws:iam::123456789012:root", doc.Statement[bySid["AccountAdministersTheKey"]].Principal["AWS"])
	require.Contains(t, bySid, "CloudWatchAlarmsPublishToTheTopic")
	cw := doc.Statement[bySid["CloudWatchAlarmsPublishToTheTopic"]]
	assert.Equal(t, "cloudwatch.amazonaws.com", cw.Principal["Service"])
	assert.ElementsMatch(t, []any{"kms:Decrypt", "kms:GenerateDataKey*"}, cw.Action)
	assert.Equal(t, "123456789012", cw.Condition["StringEquals"]["aws:SourceAccount"], "no confused deputy")
	assert.Equal(t, "arn:aws:cloudwatch:"+harness.DefaultRegion+":123456789012:alarm:dev-hoge-*", cw.Condition["ArnLike"]["aws:SourceArn"])
	_, ok = p.ResourcePlannedValuesMap["aws_sns_topic.this"]
	assert.True(t, ok)

	// A key of one's own: no key created, the topic uses it.
	own := ownTopicKey
	p = plans.Plan(t, "topic with the caller's key")
	_, ok = p.ResourcePlannedValuesMap["aws_kms_key.this[0]"]
	assert.False(t, ok, "no key of the module's own")
	assert.Equal(t, own, p.ResourcePlannedValuesMap["aws_sns_topic.this"].AttributeValues["kms_master_key_id"])
}

// TestPlanAlarmTopicValidations: every validation message of
// modules/alarm-topic, with its rule and its fix.
func TestPlanAlarmTopicValidations(t *testing.T) {
	t.Parallel()
	v := func(over map[string]any) map[string]any {
		out := map[string]any{"name": "dev-hoge-dynamodb-alarms", "account_id": "123456789012"}
		for k, x := range over {
			out[k] = x
		}
		return out
	}
	harness.ExpectRefusals(t, topicModule, []harness.Refusal{
		{Name: "DDB-NAME-01 topic name with capitals", Vars: v(map[string]any{"name": "Dev_Alarms"}), Want: []string{"DDB-NAME-01: name must be lower case letters, digits and '-'"}},
		{Name: "DDB-SEC-04 account id", Vars: v(map[string]any{"account_id": "1234"}), Want: []string{"DDB-SEC-04: account_id must be the 12-digit AWS account ID"}},
		{Name: "DDB-SEC-04 no account and no key", Vars: v(map[string]any{"account_id": nil}), Want: []string{"DDB-SEC-04: account_id must be the 12-digit AWS account ID", "left out only with kms_key_arn"}},
		{Name: "DDB-SEC-04 wildcard alarm prefix", Vars: v(map[string]any{"alarm_name_prefix": "dev-*"}), Want: []string{"DDB-SEC-04: alarm_name_prefix must be an alarm name prefix without wildcards"}},
		{Name: "DDB-SEC-04 AWS managed key alias", Vars: v(map[string]any{"kms_key_arn": "alias/aws/sns"}), Want: []string{"DDB-SEC-04: kms_key_arn must be a KMS key ARN", "CloudWatch cannot publish to a topic under alias/aws/sns"}},
	})
}
