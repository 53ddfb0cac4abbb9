package check_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
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
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/junit"
	"github.com/dynops/dynops/internal/sarif"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/schemas"
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
	assert.Contains(t, errOut, "--output \"yaml\": use table, wide, json, sarif or junit")
}

// TestCheckSARIFAndJUnitValidate runs check against live tables on the
// emulator with -o sarif and -o junit: both validate against their published
// schemas, locate findings by the table's ARN as read from the service, and
// carry exceptions as suppressions / skips.
func TestCheckSARIFAndJUnitValidate(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	bad := "dev-" + harness.UniqueID() + "-legacy"
	createTable(t, db, &dynamodb.CreateTableInput{
		TableName:            aws.String(bad),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		Tags:                 []types.Tag{{Key: aws.String("dynops:exception:DDB-MON-01"), Value: aws.String("watched elsewhere")}},
	})
	t.Cleanup(func() { _, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(bad)}) })
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(bad)})
	require.NoError(t, err)
	arn := aws.ToString(desc.Table.TableArn)

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, audit, "check", "--table", bad, "-o", "sarif")
	assert.Equal(t, 1, code, "-o sarif keeps the exit status: %s", errOut)
	schemas.SARIF(t, []byte(out))
	var log sarif.Log
	require.NoError(t, json.Unmarshal([]byte(out), &log))
	byRule := map[string]sarif.Result{}
	for _, r := range log.Runs[0].Results {
		byRule[r.RuleID] = r
	}
	for _, rule := range []string{"DDB-PROT-01", "DDB-PITR-01", "DDB-MON-01"} {
		r, ok := byRule[rule]
		require.True(t, ok, "%s is a result", rule)
		assert.Equal(t, arn, r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "located by the ARN the service returned")
	}
	assert.Len(t, byRule["DDB-MON-01"].Suppressions, 1, "the exception is suppressed with its reason")
	assert.Equal(t, guideline.ControlIDs("DDB-PITR-01"), controlIDs(byRule["DDB-PITR-01"].Properties.Controls))

	out, errOut, code = target.Dynops(t, audit, "check", "--table", bad, "-o", "junit")
	assert.Equal(t, 1, code, errOut)
	schemas.JUnit(t, []byte(out))
	var suites junit.TestSuites
	require.NoError(t, xml.Unmarshal([]byte(out), &suites))
	require.Len(t, suites.Suites, 1)
	assert.Equal(t, bad, suites.Suites[0].Name)
	assert.GreaterOrEqual(t, suites.Suites[0].Failures, 2, "PROT-01 and PITR-01 fail")
	assert.Equal(t, 1, suites.Suites[0].Skipped, "DDB-MON-01's exception")

	out, _, code = target.Dynops(t, audit, "check", "--table", bad, "-o", "json")
	assert.Equal(t, 1, code)
	var rep struct {
		Findings []guideline.Finding
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	for _, f := range rep.Findings {
		assert.Equal(t, arn, f.ARN, "-o json carries the ARN of %s", f.Resource)
		assert.Equal(t, guideline.ControlIDs(f.Rule), controlIDs(f.Controls), "-o json carries %s's controls", f.Rule)
	}
}

func controlIDs(cs []guideline.Control) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Framework+" "+c.ID)
	}
	return out
}

// TestCheckOnDemandCeilingInProtectedEnvs_DDB_CAP_04: an on-demand table in
// a protected env without an on-demand maximum fails DDB-CAP-04 (the
// emulator keeps no OnDemandThroughput, so every table here is uncapped;
// the capped path is TestCostCeiling_DDB_CAP_04 in internal/guideline); a
// dev table passes, a reasoned exception tag is an exception, and an env
// protected by the run's settings (--protected-envs) is held to the rule.
func TestCheckOnDemandCeilingInProtectedEnvs_DDB_CAP_04(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	mk := func(name string, tags ...types.Tag) string {
		createTable(t, db, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}}, Tags: tags})
		t.Cleanup(func() { _, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}) })
		return name
	}
	prod, excepted := mk("prod-"+id+"-user"), mk("prod-"+id+"-work", types.Tag{Key: aws.String("dynops:exception:DDB-CAP-04"), Value: aws.String("launch week, traffic unknown OPS-12")})
	dev, stg := mk("dev-"+id+"-user"), mk("stg-"+id+"-user")
	type finding struct{ Resource, Rule, Severity, Status, Reason, Message string }
	cap04 := func(args ...string) map[string]finding {
		out, _, _ := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), append([]string{"check", "-o", "json"}, args...)...)
		var rep struct{ Findings []finding }
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		got := map[string]finding{}
		for _, f := range rep.Findings {
			if f.Rule == "DDB-CAP-04" {
				got[f.Resource] = f
			}
		}
		return got
	}
	got := cap04("--table", prod, "--table", excepted, "--table", dev, "--table", stg)
	assert.Equal(t, "fail", got[prod].Status)
	assert.Equal(t, "error", got[prod].Severity)
	assert.Contains(t, got[prod].Message, "set on_demand_throughput", "names the fix")
	assert.Equal(t, "exception", got[excepted].Status)
	assert.Equal(t, "pass", got[dev].Status)
	assert.Equal(t, "pass", got[stg].Status, "stg is not protected by default")
	got = cap04("--table", stg, "--protected-envs", "stg")
	assert.Equal(t, "fail", got[stg].Status, "the run's protection settings decide")
}
