package check_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/check"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/test/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

func TestFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
		want    check.Options
	}{
		{args: nil, wantErr: "needs --table NAME or --env ENV"},
		{args: []string{"--table", "a", "--env", "dev"}, wantErr: "not both"},
		{args: []string{"--table", "dev-a-b", "-t", "dev-a-c"}, want: check.Options{Tables: []string{"dev-a-b", "dev-a-c"}}},
		{args: []string{"--env", "prod", "--allowed-envs", "prod,dr"}, want: check.Options{Env: "prod", AllowedEnvs: []string{"prod", "dr"}}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *check.Options
			cmd := check.NewCmdCheck(factory.New(ios), func(_ context.Context, o *check.Options) error { got = o; return nil })
			cmd.SetArgs(c.args)
			cmd.SetOut(&strings.Builder{})
			cmd.SetErr(&strings.Builder{})
			err := cmd.Execute()
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.True(t, factory.IsUsageError(err), "bad flags exit with status 2")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want.Tables, got.Tables)
			assert.Equal(t, c.want.Env, got.Env)
			if c.want.AllowedEnvs != nil {
				assert.Equal(t, c.want.AllowedEnvs, got.AllowedEnvs)
			}
		})
	}
}

type report struct {
	Findings []struct {
		Resource, Rule, Severity, Status, Reason string
	}
	Summary struct {
		Pass, Fail, Exception int
		OK                    bool
	}
}

func failing(r report) map[string]bool {
	out := map[string]bool{}
	for _, f := range r.Findings {
		if f.Status == "fail" && f.Severity == "error" {
			out[f.Rule] = true
		}
	}
	return out
}

// createTable makes a table directly with the SDK, the way a team bypassing
// the modules would.
func createTable(t *testing.T, db *dynamodb.Client, in *dynamodb.CreateTableInput) {
	t.Helper()
	_, err := db.CreateTable(context.Background(), in)
	require.NoError(t, err)
}

func TestCheckNonCompliantTableFailsWithRuleIDs(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	name := "dev-" + harness.UniqueID() + "-legacy"
	createTable(t, db, &dynamodb.CreateTableInput{
		TableName:             aws.String(name),
		BillingMode:           types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)},
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("email"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:             aws.String("email-index"),
			KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("email"), KeyType: types.KeyTypeHash}},
			Projection:            &types.Projection{ProjectionType: types.ProjectionTypeAll},
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)},
		}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly},
	})
	t.Cleanup(func() { _, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}) })

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	out, _, code := target.Dynops(t, audit, "check", "--table", name, "-o", "json")
	assert.Equal(t, 1, code, "an error-level failure exits 1")
	var rep report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "--output json prints one JSON document")
	assert.False(t, rep.Summary.OK)
	assert.Equal(t, map[string]bool{
		"DDB-NAME-02": true, "DDB-IDX-02": true, "DDB-CAP-01": true, "DDB-STREAM-01": true, "DDB-PROT-01": true, "DDB-PITR-01": true,
		"DDB-MON-01": true,
	}, failing(rep))

	table, _, code := target.Dynops(t, audit, "check", "--table", name)
	assert.Equal(t, 1, code)
	for _, want := range []string{"DDB-PITR-01", "FAIL", name + "/index/email-index", "error-level rule(s) fail"} {
		assert.Contains(t, table, want)
	}
}

func TestCheckRecordedExceptionPasses(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	name := "dev-" + harness.UniqueID() + "-work"
	createTable(t, db, &dynamodb.CreateTableInput{
		TableName:                 aws.String(name),
		BillingMode:               types.BillingModePayPerRequest,
		AttributeDefinitions:      []types.AttributeDefinition{{AttributeName: aws.String("job_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:                 []types.KeySchemaElement{{AttributeName: aws.String("job_id"), KeyType: types.KeyTypeHash}},
		StreamSpecification:       &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		DeletionProtectionEnabled: aws.Bool(true),
		Tags: []types.Tag{
			{Key: aws.String("dynops:exception:DDB-PITR-01"), Value: aws.String("work table rebuilt nightly")},
			{Key: aws.String("dynops:exception:DDB-MON-01"), Value: aws.String("watched by the job that rebuilds it")},
		},
	})
	_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: aws.String("ttl")}})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(false)})
		_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})

	out, _, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "check", "--table", name, "-o", "json")
	assert.Equal(t, 0, code, "an exception with a reason does not fail the check")
	var rep report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 2, rep.Summary.Exception)
	for _, f := range rep.Findings {
		if f.Rule == "DDB-PITR-01" {
			assert.Equal(t, "exception", f.Status)
			assert.Equal(t, "work table rebuilt nightly", f.Reason)
		}
	}
}

func TestCheckEnvWithoutTablesSaysSo(t *testing.T) {
	_, errOut, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "check", "--env", "stg")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no tables named stg-*")
}

func TestCheckBadOutputFlagIsAUsageError(t *testing.T) {
	_, errOut, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "check", "--env", "dev", "-o", "yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--output \"yaml\": use table or json")
}
