package tablesettings_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// The restore path of DDB-PITR-02 in small: capture a table's settings, plan
// them onto a bare table, apply, and read them back.
func TestCapturePlanApplyRoundTrip_DDB_PITR_02(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	src, dst := "dev-"+id+"-user", "dev-"+id+"-user-copy"
	fixture.Create(t, db, fixture.Table{Name: src, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: dst, HashKey: "user_id"})

	// Give the source every setting a restore drops.
	arn := func(name string) string {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
		require.NoError(t, err)
		return aws.ToString(out.Table.TableArn)
	}
	srcArn := arn(src)
	_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &src,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(ctx, db, src, nil))
	_, err = db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &src,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(7)}})
	require.NoError(t, err)
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &src,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: aws.String("ttl")}})
	require.NoError(t, err)
	_, err = db.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: &srcArn,
		Tags: []types.Tag{{Key: aws.String("owner"), Value: aws.String("hoge-team")}, {Key: aws.String("env"), Value: aws.String("dev")}}})
	require.NoError(t, err)
	dstArn := arn(dst)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"dynamodb:GetItem","Resource":"%s"}]}`, dstArn)
	_, err = db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &srcArn, Policy: &policy})
	require.NoError(t, err)
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &src, DeletionProtectionEnabled: aws.Bool(true)})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(ctx, db, src, nil))

	want, err := tablesettings.Capture(ctx, db, src)
	require.NoError(t, err)
	assert.Equal(t, tablesettings.Settings{PITR: true, RecoveryPeriodInDays: 7, DeletionProtection: true, TTLAttribute: "ttl",
		StreamViewType: "NEW_AND_OLD_IMAGES", Tags: map[string]string{"owner": "hoge-team", "env": "dev"}, ResourcePolicy: policy}, want)

	have, err := tablesettings.Capture(ctx, db, dst)
	require.NoError(t, err)
	assert.Equal(t, tablesettings.Settings{Tags: map[string]string{}}, have, "a new table has none of the settings")

	plan := tablesettings.Plan(have, want)
	assert.Equal(t, []string{"stream", "pitr", "ttl", "tags", "resource-policy", "deletion-protection"}, fixture.Whats(plan),
		"stream first (needs ACTIVE), deletion protection last (a failed step leaves the table deletable)")
	var done []string
	require.NoError(t, tablesettings.Apply(ctx, db, dst, plan, func(c tablesettings.Change) { done = append(done, c.What) }))
	assert.Equal(t, fixture.Whats(plan), done, "Apply reports every change, in order")

	got, err := tablesettings.Capture(ctx, db, dst)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the copy reads back with the source's settings")
	assert.Empty(t, tablesettings.Plan(got, want), "a second plan has nothing to do")
}

// A live stream's view type cannot change in place: the plan turns it off and on.
func TestApplyChangesStreamViewType_DDB_STREAM_01(t *testing.T) {
	target.RequireAWS(t, "cannot enable a stream on a table that had one (UpdateTable: ResourceInUseException \"Cannot enable stream\")")
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	name := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
	_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(ctx, db, name, nil))

	have, err := tablesettings.Capture(ctx, db, name)
	require.NoError(t, err)
	require.Equal(t, "KEYS_ONLY", have.StreamViewType)
	want := tablesettings.Guideline(map[string]string{"owner": "hoge-team"})
	plan := tablesettings.Plan(have, want)
	require.Equal(t, []string{"stream", "pitr", "ttl", "tags", "deletion-protection"}, fixture.Whats(plan))
	require.NoError(t, tablesettings.Apply(ctx, db, name, plan, nil))

	got, err := tablesettings.Capture(ctx, db, name)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the table now has the guideline's settings (DDB-PITR-01, DDB-PROT-01, DDB-STREAM-01, DDB-NAME-03)")
}

// A table with nothing set gets the guideline's settings (e.g. after an import).
func TestApplyGuidelineToBareTable(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	name := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
	have, err := tablesettings.Capture(ctx, db, name)
	require.NoError(t, err)
	want := tablesettings.Guideline(map[string]string{"owner": "hoge-team"})
	require.NoError(t, tablesettings.Apply(ctx, db, name, tablesettings.Plan(have, want), nil))
	got, err := tablesettings.Capture(ctx, db, name)
	require.NoError(t, err)
	assert.Equal(t, want, got, "DDB-PITR-01 35 days, DDB-PROT-01, DDB-STREAM-01, DDB-NAME-03 ttl")
}
