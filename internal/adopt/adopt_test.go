package adopt

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/guideline"
)

// fakeDB serves one table's description (decision logic only; the emulator
// test TestAdoptTableMadeOutsideTerraform runs the real path).
type fakeDB struct {
	t    types.TableDescription
	pitr *types.PointInTimeRecoveryDescription
	ttl  *types.TimeToLiveDescription
	tags []types.Tag
	ci   types.ContributorInsightsStatus
	// policy is the resource policy; policyErr the error reading it.
	policy    string
	policyErr error
}

func (f *fakeDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &f.t}, nil
}
func (f *fakeDB) DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error) {
	return &dynamodb.DescribeContinuousBackupsOutput{ContinuousBackupsDescription: &types.ContinuousBackupsDescription{PointInTimeRecoveryDescription: f.pitr}}, nil
}
func (f *fakeDB) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return &dynamodb.DescribeTimeToLiveOutput{TimeToLiveDescription: f.ttl}, nil
}
func (f *fakeDB) ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	return &dynamodb.ListTagsOfResourceOutput{Tags: f.tags}, nil
}
func (f *fakeDB) ListTables(context.Context, *dynamodb.ListTablesInput, ...func(*dynamodb.Options)) (*dynamodb.ListTablesOutput, error) {
	return &dynamodb.ListTablesOutput{}, nil
}
func (f *fakeDB) DescribeContributorInsights(context.Context, *dynamodb.DescribeContributorInsightsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContributorInsightsOutput, error) {
	if f.ci == "" {
		return nil, errors.New("500 not implemented")
	}
	return &dynamodb.DescribeContributorInsightsOutput{ContributorInsightsStatus: f.ci}, nil
}
func (f *fakeDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	if f.policyErr != nil {
		return nil, f.policyErr
	}
	return &dynamodb.GetResourcePolicyOutput{Policy: aws.String(f.policy)}, nil
}

type fakeAAS struct{ targets []aastypes.ScalableTarget }

func (f fakeAAS) DescribeScalableTargets(context.Context, *aas.DescribeScalableTargetsInput, ...func(*aas.Options)) (*aas.DescribeScalableTargetsOutput, error) {
	return &aas.DescribeScalableTargetsOutput{ScalableTargets: f.targets}, nil
}

func compliant(name string) *fakeDB {
	return &fakeDB{
		t: types.TableDescription{
			TableName: aws.String(name), TableArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/" + name),
			KeySchema:                 []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
			AttributeDefinitions:      []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
			BillingModeSummary:        &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest},
			DeletionProtectionEnabled: aws.Bool(true),
			StreamSpecification:       &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		},
		pitr: &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusEnabled, RecoveryPeriodInDays: aws.Int32(35)},
		ttl:  &types.TimeToLiveDescription{TimeToLiveStatus: types.TimeToLiveStatusEnabled, AttributeName: aws.String("ttl")},
		ci:   types.ContributorInsightsStatusDisabled,
	}
}

// TestReadCompliantTableHasNoException: a table that already follows the
// guideline is adopted with no exception and only the table imported.
func TestReadCompliantTableHasNoException(t *testing.T) {
	r, err := Read(context.Background(), compliant("prod-hoge-user"), fakeAAS{}, Options{Table: "prod-hoge-user", Region: "eu-west-1", AccountID: "123456789012"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage != "user" || len(r.Deviations) != 0 {
		t.Errorf("usage %q, deviations %v", r.Usage, r.Deviations)
	}
	for k := range r.Entry {
		switch k {
		case "hash_key", "attributes", "contributor_insights_enabled":
		default:
			t.Errorf("unexpected key %s=%v for a compliant table", k, r.Entry[k])
		}
	}
	if len(r.Imports) != 1 || r.Imports[0].To != `module.stack.module.table["user"].aws_dynamodb_table.this` || r.Imports[0].ID != "prod-hoge-user" {
		t.Errorf("imports %v", r.Imports)
	}
}

// TestReadDeviations: each kind of deviation becomes an exception with a
// placeholder reason (and the settings that keep the plan empty).
func TestReadDeviations(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		breakIt func(f *fakeDB)
		as      fakeAAS
		rule    string
		keys    []string
	}{
		{"legacy name", Options{Table: "Users", Env: "prod", Product: "hoge", Usage: "user"}, func(f *fakeDB) {}, fakeAAS{}, "DDB-NAME-01", []string{"name_override", "name_override_reason"}},
		{"deletion protection off", Options{}, func(f *fakeDB) { f.t.DeletionProtectionEnabled = aws.Bool(false) }, fakeAAS{}, "DDB-PROT-01", []string{"deletion_protection_enabled", "deletion_protection_disabled_reason"}},
		{"PITR off", Options{}, func(f *fakeDB) { f.pitr = nil }, fakeAAS{}, "DDB-PITR-01", []string{"point_in_time_recovery", "point_in_time_recovery_reason"}},
		{"PITR 7 days", Options{}, func(f *fakeDB) { f.pitr.RecoveryPeriodInDays = aws.Int32(7) }, fakeAAS{}, "DDB-PITR-01", []string{"point_in_time_recovery", "point_in_time_recovery_reason"}},
		{"stream KEYS_ONLY", Options{}, func(f *fakeDB) { f.t.StreamSpecification.StreamViewType = types.StreamViewTypeKeysOnly }, fakeAAS{}, "DDB-STREAM-01", []string{"stream_view_type", "stream_view_type_reason"}},
		{"TTL off", Options{}, func(f *fakeDB) { f.ttl = nil }, fakeAAS{}, "DDB-NAME-03", []string{"ttl_enabled", "ttl_reason"}},
		{"TTL on expires_at", Options{}, func(f *fakeDB) { f.ttl.AttributeName = aws.String("expires_at") }, fakeAAS{}, "DDB-NAME-03", []string{"ttl_attribute_name", "ttl_reason"}},
		{"GSI ALL", Options{}, func(f *fakeDB) {
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("gsi1"), KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}}, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}
		}, fakeAAS{}, "DDB-IDX-02", []string{"allow_projection_all", "projection_all_reason"}},
		{"PROVISIONED without auto scaling", Options{}, func(f *fakeDB) {
			f.t.BillingModeSummary.BillingMode = types.BillingModeProvisioned
			f.t.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(2)}
		}, fakeAAS{}, "DDB-CAP-01", []string{"billing_mode", "provisioned_reason", "read_capacity", "write_capacity", "autoscaling", "autoscaling_disabled_reason"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := compliant("prod-hoge-user")
			if c.opts.Table != "" {
				f.t.TableName = aws.String(c.opts.Table)
			}
			c.breakIt(f)
			o := c.opts
			if o.Table == "" {
				o.Table = "prod-hoge-user"
			}
			r, err := Read(context.Background(), f, c.as, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Deviations) == 0 {
				t.Errorf("no deviation, want %s", c.rule)
			}
			for _, d := range r.Deviations {
				if d.Rule != c.rule {
					t.Errorf("deviation %v, want only %s", d, c.rule)
				}
			}
			for _, k := range c.keys {
				v, ok := r.Entry[k]
				if !ok {
					t.Errorf("entry lacks %s: %v", k, r.Entry)
				}
				if s, isStr := v.(string); isStr && k[len(k)-6:] == "reason" && len(s) < len(Placeholder) {
					t.Errorf("%s = %q, want the placeholder", k, s)
				}
			}
		})
	}
}

// TestReadAutoscaledTableImportsTargets: auto scaling stays on with the
// live min/max and its targets are imported.
func TestReadAutoscaledTableImportsTargets(t *testing.T) {
	f := compliant("prod-hoge-user")
	f.t.BillingModeSummary.BillingMode = types.BillingModeProvisioned
	f.t.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(12), WriteCapacityUnits: aws.Int64(4)}
	as := fakeAAS{targets: []aastypes.ScalableTarget{
		{ResourceId: aws.String("table/prod-hoge-user"), ScalableDimension: aastypes.ScalableDimensionDynamoDBTableReadCapacityUnits, MinCapacity: aws.Int32(5), MaxCapacity: aws.Int32(50)},
	}}
	r, err := Read(context.Background(), f, as, Options{Table: "prod-hoge-user"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Entry["read_capacity"] != int32(5) || r.Entry["autoscaling"].(map[string]any)["read_max_capacity"] != int32(50) {
		t.Errorf("entry %v", r.Entry)
	}
	want := Import{To: `module.stack.module.table["user"].aws_appautoscaling_target.this["table-read"]`, ID: "dynamodb/table/prod-hoge-user/dynamodb:table:ReadCapacityUnits"}
	if !slices.Contains(r.Imports, want) {
		t.Errorf("imports %v lack %v", r.Imports, want)
	}
}

// TestReadLegacyNameNeedsEnvProductUsage: a name outside DDB-NAME-01 needs the flags.
func TestReadLegacyNameNeedsEnvProductUsage(t *testing.T) {
	_, err := Read(context.Background(), compliant("Users"), fakeAAS{}, Options{Table: "Users"})
	if err == nil {
		t.Fatal("adopting Users without --env/--product/--usage must fail")
	}
}

// TestPlaceholderIsRefused: every reason adopt writes is one the guardrails
// refuse until a person rewrites it (one definition: guideline.ReasonSaysWhy).
func TestPlaceholderIsRefused(t *testing.T) {
	for _, r := range []string{Placeholder, Placeholder + " (PITR off; or take the fix: delete these two lines)"} {
		if guideline.ReasonSaysWhy(r) {
			t.Errorf("%q counts as a reason; adopt's placeholder must be refused", r)
		}
	}
}
