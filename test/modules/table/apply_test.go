package table

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/test/helpers/harness"
)

// applyExample applies an example of the module on the target and registers
// its teardown: deletion protection is turned off with a reason (the
// guideline's two-step delete, DDB-PROT-01), then the example is destroyed.
func applyExample(t *testing.T, example string, extra map[string]any) *terraform.Options {
	t.Helper()
	vars := map[string]any{"env": "dev", "product": harness.UniqueID()}
	if target.OnEmulator() {
		vars["contributor_insights_enabled"] = false // moto: 500 Not Implemented
	}
	for k, v := range extra {
		vars[k] = v
	}
	return target.ApplyProtected(t, filepath.Join(module, "examples", example), vars)
}

func describe(t *testing.T, db *dynamodb.Client, name string) *types.TableDescription {
	t.Helper()
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
	require.NoError(t, err)
	return out.Table
}

func TestApplyBasicExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	vars := map[string]any{"env": "dev", "product": harness.UniqueID(), "account_id": target.AccountID(t)}
	if target.OnEmulator() {
		vars["contributor_insights_enabled"] = false // moto: 500 Not Implemented
	}
	opts := target.Options(t, filepath.Join(module, "examples", "basic"), vars)
	deleted := false
	t.Cleanup(func() { // on AWS, when the two-step delete below did not run
		if !deleted && !target.OnEmulator() {
			harness.Destroy(t, opts, true)
		}
	})
	terraform.InitAndApply(t, opts)
	outputs := terraform.OutputAll(t, opts) // every output in one terraform run
	name := fmt.Sprint(outputs["table_name"])
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := describe(t, db, name)

	t.Run("DDB-CAP-01 on-demand", func(t *testing.T) {
		require.NotNil(t, table.BillingModeSummary)
		assert.Equal(t, types.BillingModePayPerRequest, table.BillingModeSummary.BillingMode)
	})
	t.Run("DDB-IDX-02 gsi1 projects INCLUDE", func(t *testing.T) {
		require.Len(t, table.GlobalSecondaryIndexes, 1)
		g := table.GlobalSecondaryIndexes[0]
		assert.Equal(t, "gsi1", aws.ToString(g.IndexName))
		assert.Equal(t, types.ProjectionTypeInclude, g.Projection.ProjectionType)
		assert.ElementsMatch(t, []string{"display_name", "status"}, g.Projection.NonKeyAttributes)
	})
	t.Run("DDB-STREAM-01 NEW_AND_OLD_IMAGES", func(t *testing.T) {
		require.NotNil(t, table.StreamSpecification)
		assert.True(t, aws.ToBool(table.StreamSpecification.StreamEnabled))
		assert.Equal(t, types.StreamViewTypeNewAndOldImages, table.StreamSpecification.StreamViewType)
		assert.Equal(t, aws.ToString(table.LatestStreamArn), outputs["stream_arn"])
	})
	t.Run("DDB-PITR-01 PITR on for 35 days", func(t *testing.T) {
		cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &name})
		require.NoError(t, err)
		pitr := cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription
		assert.Equal(t, types.PointInTimeRecoveryStatusEnabled, pitr.PointInTimeRecoveryStatus)
		assert.Equal(t, int32(35), aws.ToInt32(pitr.RecoveryPeriodInDays))
	})
	t.Run("DDB-NAME-03 TTL on ttl", func(t *testing.T) {
		ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &name})
		require.NoError(t, err)
		assert.Equal(t, types.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus)
		assert.Equal(t, "ttl", aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	})
	t.Run("standard tags", func(t *testing.T) {
		tags, err := db.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: table.TableArn})
		require.NoError(t, err)
		got := map[string]string{}
		for _, tag := range tags.Tags {
			got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		assert.Equal(t, "dev", got["env"])
		assert.Equal(t, opts.Vars["product"], got["product"])
		assert.Equal(t, "user", got["usage"])
		assert.Equal(t, "terraform", got["managed-by"])
		assert.Equal(t, "platform-team", got["owner"])
	})
	t.Run("DDB-PROT-01 DeleteTable is refused", func(t *testing.T) {
		_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
		require.Error(t, err, "deletion protection must refuse DeleteTable")
		var apiErr smithy.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "ValidationException", apiErr.ErrorCode(), "refused for deletion protection: %v", err)
		describe(t, db, name) // still there
	})
	t.Run("no drift after apply", func(t *testing.T) {
		assert.Equal(t, 0, terraform.PlanExitCode(t, opts), "a second plan must show no changes")
	})
	t.Run("dynops check passes every rule", func(t *testing.T) {
		auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
		out, _, code := target.Dynops(t, auditLog, "check", "--table", name, "--output", "json")
		require.Equal(t, 0, code)
		var rep struct {
			Findings []struct{ Rule, Status string }
			Summary  struct{ Fail, Pass int }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.Zero(t, rep.Summary.Fail)
		assert.GreaterOrEqual(t, rep.Summary.Pass, 9, "every rule is reported")
		all, err := audit.Read(auditLog)
		require.NoError(t, err)
		recs := audit.Runs(all) // started + finished per run
		require.Len(t, recs, 1)
		assert.Equal(t, "dynops check", recs[0].Command)
	})
	// The guideline's two-step delete: protection off with a reason, then
	// destroy. Every other apply test leaves its resources to the emulator.
	t.Run("DDB-PROT-01 two-step delete", func(t *testing.T) {
		opts.Vars["deletion_protection_enabled"] = false
		opts.Vars["deletion_protection_disabled_reason"] = "test teardown"
		terraform.Apply(t, opts)
		assert.False(t, aws.ToBool(describe(t, db, name).DeletionProtectionEnabled), "step 1 turns deletion protection off")
		terraform.Destroy(t, opts)
		deleted = true
		_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
		var notFound *types.ResourceNotFoundException
		require.ErrorAs(t, err, &notFound, "step 2 deletes the table: DescribeTable after the destroy")
	})
}

func TestApplyMultiTenantExample(t *testing.T) {
	t.Parallel()
	opts := applyExample(t, "multi-tenant", nil)
	outputs := terraform.OutputAll(t, opts) // every output in one terraform run
	name := fmt.Sprint(outputs["table_name"])
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := describe(t, db, name)

	keys := map[string]types.KeyType{}
	for _, k := range table.KeySchema {
		keys[aws.ToString(k.AttributeName)] = k.KeyType
	}
	assert.Equal(t, map[string]types.KeyType{"tenant_key": types.KeyTypeHash, "order_key": types.KeyTypeRange}, keys)
	proj := map[string]types.ProjectionType{}
	for _, g := range table.GlobalSecondaryIndexes {
		proj[aws.ToString(g.IndexName)] = g.Projection.ProjectionType
	}
	assert.Equal(t, map[string]types.ProjectionType{"gsi1": types.ProjectionTypeInclude, "gsi2": types.ProjectionTypeKeysOnly}, proj)
	gsiArns, _ := outputs["gsi_arns"].(map[string]any)
	assert.Equal(t, aws.ToString(table.TableArn)+"/index/gsi1", gsiArns["gsi1"])
}

func TestApplyGlobalTableExample_DDB_DR_01(t *testing.T) {
	target.RequireAWS(t, "has no global tables: the provider waits forever for replica creation")
	t.Parallel()
	opts := applyExample(t, "global-table", nil)
	name := terraform.Output(t, opts, "table_name")
	table := describe(t, dynamodb.NewFromConfig(target.AWSConfig(t)), name)
	regions := map[string]bool{}
	for _, r := range table.Replicas {
		regions[aws.ToString(r.RegionName)] = true
		assert.Equal(t, types.ReplicaStatusActive, r.ReplicaStatus)
	}
	assert.True(t, regions["eu-central-1"] && regions["us-west-2"], "replicas: %v", regions)
}

func TestApplyContributorInsights(t *testing.T) {
	target.RequireAWS(t, "does not implement Contributor Insights (500)")
	t.Parallel()
	opts := applyExample(t, "basic", map[string]any{"contributor_insights_enabled": true, "account_id": target.AccountID(t)})
	name := terraform.Output(t, opts, "table_name")
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	out, err := db.DescribeContributorInsights(context.Background(), &dynamodb.DescribeContributorInsightsInput{TableName: &name})
	require.NoError(t, err)
	assert.Contains(t, []types.ContributorInsightsStatus{types.ContributorInsightsStatusEnabled, types.ContributorInsightsStatusEnabling}, out.ContributorInsightsStatus)
}
