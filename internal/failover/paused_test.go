package failover

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fisPauseStatement is the statement AWS FIS adds to a replica's resource
// policy for aws:dynamodb:global-table-pause-replication, in the shape the
// AWS FIS actions reference shows ("Amazon DynamoDB actions").
func fisPauseStatement(tableARN string) string {
	return fmt.Sprintf(`{"Sid":"DoNotModifyFisDynamoDbPauseReplicationEXP123abc","Effect":"Deny","Principal":{"AWS":"*"},
"Action":["dynamodb:GetItem","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem","dynamodb:DescribeTable","dynamodb:UpdateTable","dynamodb:Scan","dynamodb:DescribeTimeToLive","dynamodb:UpdateTimeToLive"],
"Resource":%q,"Condition":{"DateLessThan":{"aws:CurrentTime":"2026-11-27T09:51:41.511Z"},
"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::123456789012:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"}}}`, tableARN)
}

// TestReplicationPauses: the FIS pause statement is found (with its end),
// beside other statements; dynops's own fence, which exempts the
// replication role, is not a pause.
func TestReplicationPauses(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-session"
	fence, err := withFence("", arn, "", FenceSid)
	require.NoError(t, err)
	assert.Empty(t, ReplicationPauses(fence), "dr's fence exempts the replication role: not a pause")
	mig, err := withFence("", arn, "", MigrateFenceSid)
	require.NoError(t, err)
	assert.Empty(t, ReplicationPauses(mig))
	assert.Empty(t, ReplicationPauses(""))

	doc := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[%s]}`, fisPauseStatement(arn))
	assert.Equal(t, []ReplicationPause{{Sid: "DoNotModifyFisDynamoDbPauseReplicationEXP123abc", Until: "2026-11-27T09:51:41.511Z", FIS: true}}, ReplicationPauses(doc))

	both, err := withFence(doc, arn, "", FenceSid)
	require.NoError(t, err)
	assert.Len(t, ReplicationPauses(both), 1, "the pause is found beside dr's fence")

	other := `{"Version":"2012-10-17","Statement":{"Sid":"ops-pause","Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"*","Condition":{"ArnLike":{"aws:PrincipalArn":["arn:aws:iam::123456789012:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"]}}}}`
	assert.Equal(t, []ReplicationPause{{Sid: "ops-pause"}}, ReplicationPauses(other), "any statement denying the replication role by name pauses it")
}

// TestPreflightRefusesWhileReplicationIsPaused: a pause on any replica
// (the target, the old region or a third) refuses the switch, naming the
// region, the statement and its end.
func TestPreflightRefusesWhileReplicationIsPaused(t *testing.T) {
	for i, region := range []string{"eu-west-1", "eu-central-1", "eu-north-1"} {
		s := threeRegions(nil)
		arn := "arn:aws:dynamodb:" + region + ":123456789012:table/prod-hoge-session"
		s.Regions[i].Policy = fmt.Sprintf(`{"Version":"2012-10-17","Statement":[%s]}`, fisPauseStatement(arn))
		r := rules()
		r.Mode, r.From, r.To = Failover, "eu-west-1", "eu-central-1"
		var got Check
		for _, c := range Preflight(s, r) {
			if c.Name == "replication-paused" {
				got = c
			}
		}
		assert.Equal(t, CheckFail, got.Status, region)
		assert.Contains(t, got.Detail, region+": an AWS FIS experiment (aws:dynamodb:global-table-pause-replication), statement DoNotModifyFisDynamoDbPauseReplicationEXP123abc until 2026-11-27T09:51:41.511Z")
	}
	s := threeRegions(nil)
	r := rules()
	r.Mode, r.From, r.To = Failover, "eu-west-1", "eu-central-1"
	assert.Empty(t, Refused(Preflight(s, r)), "no pause, nothing refused")
}
