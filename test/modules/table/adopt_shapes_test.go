package table

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestAdoptSingleTableShapes: legacy single-table designs made outside
// Terraform (generic PK/SK keys, GSI1/GSI2 on GSI1PK/GSI1SK..., an LSI,
// streams of every view type, TTL on another attribute, on-demand and
// provisioned) are adopted into an entry that plans with only the exceptions
// it needs, each naming its rule: refused while adopt's placeholders stand,
// imported once a person writes the reasons, an empty plan after the apply.
// PITR and deletion protection are on so that each shape stays within the
// tags moto reads back (see TestAdoptTableMadeOutsideTerraform).
func TestAdoptSingleTableShapes(t *testing.T) {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(h, r string) []types.KeySchemaElement {
		k := []types.KeySchemaElement{{AttributeName: aws.String(h), KeyType: types.KeyTypeHash}}
		if r != "" {
			k = append(k, types.KeySchemaElement{AttributeName: aws.String(r), KeyType: types.KeyTypeRange})
		}
		return k
	}
	keysOnly := &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
	include := &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"status"}}
	for _, c := range []struct {
		name        string
		provisioned bool
		attrs       []types.AttributeDefinition
		hash, rng   string
		gsis        []types.GlobalSecondaryIndex
		lsis        []types.LocalSecondaryIndex
		view        types.StreamViewType
		ttl         string
		rules       []string
		wants       []string
	}{
		{name: "on-demand PK/SK GSI1 GSI2 LSI1 NEW_IMAGE ttl expiresAt",
			attrs: []types.AttributeDefinition{s("PK"), s("SK"), s("GSI1PK"), s("GSI1SK"), s("GSI2PK"), s("LSI1SK")}, hash: "PK", rng: "SK",
			gsis: []types.GlobalSecondaryIndex{
				{IndexName: aws.String("GSI1"), KeySchema: key("GSI1PK", "GSI1SK"), Projection: include},
				{IndexName: aws.String("GSI2"), KeySchema: key("GSI2PK", ""), Projection: keysOnly},
			},
			lsis: []types.LocalSecondaryIndex{{IndexName: aws.String("LSI1"), KeySchema: key("PK", "LSI1SK"), Projection: keysOnly}},
			view: types.StreamViewTypeNewImage, ttl: "expiresAt",
			rules: []string{"DDB-NAME-02", "DDB-NAME-03", "DDB-STREAM-01"},
			wants: []string{"hash_key: PK", "range_key: SK", "name: GSI1", "name: GSI2", "name: LSI1", "ttl_attribute_name: expiresAt", "stream_view_type: NEW_IMAGE", "index_naming_reason:", "key_naming_reason:"}},
		{name: "provisioned PK/SK GSI1 KEYS_ONLY no ttl", provisioned: true,
			attrs: []types.AttributeDefinition{s("PK"), s("SK"), s("GSI1PK"), s("GSI1SK")}, hash: "PK", rng: "SK",
			gsis:  []types.GlobalSecondaryIndex{{IndexName: aws.String("GSI1"), KeySchema: key("GSI1PK", "GSI1SK"), Projection: keysOnly}},
			view:  types.StreamViewTypeKeysOnly,
			rules: []string{"DDB-CAP-01", "DDB-NAME-02", "DDB-NAME-03", "DDB-STREAM-01"},
			wants: []string{"billing_mode: PROVISIONED", "name: GSI1", "stream_view_type: KEYS_ONLY", "ttl_enabled: false"}},
		{name: "on-demand PK only OLD_IMAGE ttl on ttl",
			attrs: []types.AttributeDefinition{s("PK")}, hash: "PK",
			view: types.StreamViewTypeOldImage, ttl: "ttl",
			rules: []string{"DDB-NAME-03", "DDB-STREAM-01"},
			wants: []string{"hash_key: PK", "stream_view_type: OLD_IMAGE"}},
		{name: "on-demand pk/sk snake_case NEW_AND_OLD_IMAGES ttl expires_at",
			attrs: []types.AttributeDefinition{s("pk"), s("sk")}, hash: "pk", rng: "sk",
			view: types.StreamViewTypeNewAndOldImages, ttl: "expires_at",
			rules: []string{"DDB-NAME-03"},
			wants: []string{"ttl_attribute_name: expires_at"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "on-demand PK/SK GSI1 GSI2 LSI1 NEW_IMAGE ttl expiresAt" {
				harness.Long(t, "one more legacy shape adopted, imported and applied (make test runs the single-table PK/SK GSI1 GSI2 LSI shape)")
			}
			t.Parallel()
			ctx := context.Background()
			db := dynamodb.NewFromConfig(target.AWSConfig(t))
			id := harness.UniqueID()
			name := "dev-" + id + "-legacy"
			in := &dynamodb.CreateTableInput{TableName: &name, AttributeDefinitions: c.attrs, KeySchema: key(c.hash, c.rng),
				GlobalSecondaryIndexes: c.gsis, LocalSecondaryIndexes: c.lsis, DeletionProtectionEnabled: aws.Bool(true),
				StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: c.view}}
			if c.provisioned {
				in.BillingMode = types.BillingModeProvisioned
				pt := &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(2)}
				in.ProvisionedThroughput = pt
				for i := range in.GlobalSecondaryIndexes {
					in.GlobalSecondaryIndexes[i].ProvisionedThroughput = pt
				}
			} else {
				in.BillingMode = types.BillingModePayPerRequest
			}
			_, err := db.CreateTable(ctx, in)
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name, DeletionProtectionEnabled: aws.Bool(false)})
				_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
				assert.NoError(t, err, "deleting the adopted table")
			})
			waitActive(t, db, name)
			_, err = db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &name,
				PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}})
			require.NoError(t, err)
			if c.ttl != "" {
				_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &name,
					TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: &c.ttl, Enabled: aws.Bool(true)}})
				require.NoError(t, err)
			}
			adoptAndApply(t, name, id, c.rules, c.wants)
		})
	}
}
