package restore

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/guideline"
)

func TestDefaultTargetIsAValidName_DDB_NAME_01(t *testing.T) {
	now := time.Date(2026, 11, 21, 21, 47, 5, 0, time.FixedZone("JST", 9*3600))
	name, err := DefaultTarget("prod-hoge-user", now)
	require.NoError(t, err)
	assert.Equal(t, "prod-hoge-user-restored-20261121t124705z", name, "UTC, lower case")
	assert.NoError(t, CheckDynamoDBTableName(name))
	assert.True(t, guideline.FollowsNamingRule(name, guideline.DefaultEnvs()), "still {env}-{product}-{usage}")

	_, err = DefaultTarget(strings.Repeat("a", 240), now)
	assert.ErrorIs(t, err, ErrBadTarget)
	assert.ErrorContains(t, err, "pass --target")

	// The longest source that still fits: 229 + len("-restored-20261121t124705z") = 255.
	suffix := len("-restored-20261121t124705z")
	name, err = DefaultTarget(strings.Repeat("a", 255-suffix), now)
	require.NoError(t, err, "a name of exactly 255 characters is a valid table name")
	assert.Len(t, name, 255)
	assert.NoError(t, CheckDynamoDBTableName(name))
	_, err = DefaultTarget(strings.Repeat("a", 256-suffix), now)
	assert.ErrorIs(t, err, ErrBadTarget, "256 characters is one too many")
}

func TestCheckDynamoDBTableName(t *testing.T) {
	for _, ok := range []string{"abc", "prod-hoge-user.v2", "A_b-1"} {
		assert.NoError(t, CheckDynamoDBTableName(ok), ok)
	}
	for _, bad := range []string{"ab", "has space", "slash/name", strings.Repeat("a", 256)} {
		assert.ErrorIs(t, CheckDynamoDBTableName(bad), ErrBadTarget, bad)
	}
}

func TestWindowCheck(t *testing.T) {
	early := time.Date(2026, 11, 1, 0, 0, 0, 123_456_000, time.UTC) // the service keeps sub-second digits
	late := time.Date(2026, 11, 21, 12, 0, 0, 987_000_000, time.UTC)
	w := Window{Table: "prod-hoge-user", Status: "ENABLED", RecoveryPeriodInDays: 35, Earliest: &early, Latest: &late}
	check := func(t time.Time) error { _, err := w.Check(t); return err }
	parse := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, "2026-11-01T00:00:00.123Z .. 2026-11-21T12:00:00.987Z", w.String(), "printed to the millisecond")
	// Both bounds exactly as printed by pitr status (EARLIEST, LATEST) are accepted.
	got, err := w.Check(parse("2026-11-01T00:00:00.123Z"))
	require.NoError(t, err)
	assert.True(t, got.Equal(early), "EARLIEST copied from pitr status resolves to the earliest restorable time: %s", got)
	assert.NoError(t, check(parse("2026-11-21T12:00:00.987Z")))
	assert.NoError(t, check(early))
	assert.NoError(t, check(late))
	assert.NoError(t, check(early.Add(time.Hour)))

	err = check(late.Add(time.Millisecond))
	assert.ErrorIs(t, err, ErrOutsideWindow)
	assert.ErrorContains(t, err, "--time 2026-11-21T12:00:00.988Z is outside the restorable window of prod-hoge-user, 2026-11-01T00:00:00.123Z .. 2026-11-21T12:00:00.987Z (UTC)")
	assert.ErrorIs(t, check(parse("2026-11-01T00:00:00.122Z")), ErrOutsideWindow, "a millisecond early")
	assert.ErrorIs(t, check(parse("2026-11-01T00:00:00Z")), ErrOutsideWindow, "the second the old output printed is outside")

	off := Window{Table: "dev-hoge-work", Status: "DISABLED"}
	assert.ErrorIs(t, func() error { _, err := off.Check(early); return err }(), ErrPITROff)
	_, err = off.Check(early)
	assert.ErrorContains(t, err, "DDB-PITR-01")
	assert.Equal(t, "none (PITR disabled)", off.String())
}

func TestRestoreInputKeepsBillingIndexesAndEncryption(t *testing.T) {
	keys := func(names ...string) []types.KeySchemaElement {
		var ks []types.KeySchemaElement
		for i, n := range names {
			kt := types.KeyTypeHash
			if i > 0 {
				kt = types.KeyTypeRange
			}
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(n), KeyType: kt})
		}
		return ks
	}
	pt := &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(7)}
	kms := "arn:aws:kms:eu-west-1:123456789012:key/abc"
	src := &types.TableDescription{
		BillingModeSummary:    &types.BillingModeSummary{BillingMode: types.BillingModeProvisioned},
		ProvisionedThroughput: pt,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("gsi1"), KeySchema: keys("email"),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, ProvisionedThroughput: pt}},
		LocalSecondaryIndexes: []types.LocalSecondaryIndexDescription{{IndexName: aws.String("lsi1"), KeySchema: keys("tenant_key", "created_at"),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}},
		SSEDescription: &types.SSEDescription{Status: types.SSEStatusEnabled, SSEType: types.SSETypeKms, KMSMasterKeyArn: &kms},
	}
	when := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	in := restoreInput(src, &Plan{Source: "prod-hoge-order", Target: "prod-hoge-order-restored-x", RestoreTime: when})
	assert.Equal(t, "prod-hoge-order", aws.ToString(in.SourceTableName))
	assert.Equal(t, "prod-hoge-order-restored-x", aws.ToString(in.TargetTableName))
	assert.Equal(t, when, *in.RestoreDateTime)
	assert.Nil(t, in.UseLatestRestorableTime)
	assert.Equal(t, types.BillingModeProvisioned, in.BillingModeOverride)
	assert.Equal(t, &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(7)}, in.ProvisionedThroughputOverride)
	require.Len(t, in.GlobalSecondaryIndexOverride, 1)
	assert.Equal(t, "gsi1", aws.ToString(in.GlobalSecondaryIndexOverride[0].IndexName))
	assert.NotNil(t, in.GlobalSecondaryIndexOverride[0].ProvisionedThroughput)
	require.Len(t, in.LocalSecondaryIndexOverride, 1)
	assert.Equal(t, "lsi1", aws.ToString(in.LocalSecondaryIndexOverride[0].IndexName))
	assert.Equal(t, &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: &kms}, in.SSESpecificationOverride,
		"the customer managed key stays (DDB-SEC-04)")

	onDemand := restoreInput(&types.TableDescription{BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest}},
		&Plan{Source: "a", Target: "b", Latest: true})
	assert.Equal(t, types.BillingModePayPerRequest, onDemand.BillingModeOverride, "DDB-CAP-01")
	assert.True(t, aws.ToBool(onDemand.UseLatestRestorableTime))
	assert.Nil(t, onDemand.RestoreDateTime)
	assert.Nil(t, onDemand.ProvisionedThroughputOverride)
	assert.Equal(t, &types.SSESpecification{Enabled: aws.Bool(false)}, onDemand.SSESpecificationOverride, "AWS owned key")
}

// TestRestoreInputBillingMode: a table's billing mode comes from its
// BillingModeSummary; a table created PROVISIONED before that field existed
// has none, and is PROVISIONED when it has read capacity (DDB-CAP-01: the
// restore keeps the source's mode and capacity rather than switching it).
func TestRestoreInputBillingMode(t *testing.T) {
	pt := func(r, w int64) *types.ProvisionedThroughputDescription {
		return &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(r), WriteCapacityUnits: aws.Int64(w)}
	}
	gsi := func(p *types.ProvisionedThroughputDescription) []types.GlobalSecondaryIndexDescription {
		return []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("gsi1"), ProvisionedThroughput: p}}
	}
	cases := []struct {
		name string
		src  types.TableDescription
		want types.BillingMode
		cap  *types.ProvisionedThroughput // the table's override
	}{
		{"PROVISIONED summary", types.TableDescription{BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModeProvisioned}, ProvisionedThroughput: pt(5, 7), GlobalSecondaryIndexes: gsi(pt(2, 3))},
			types.BillingModeProvisioned, &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(7)}},
		{"PAY_PER_REQUEST summary, throughput of zeros", types.TableDescription{BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest}, ProvisionedThroughput: pt(0, 0), GlobalSecondaryIndexes: gsi(pt(0, 0))},
			types.BillingModePayPerRequest, nil},
		{"PAY_PER_REQUEST summary, old capacity left", types.TableDescription{BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest}, ProvisionedThroughput: pt(5, 5)},
			types.BillingModePayPerRequest, nil},
		{"no summary, read capacity", types.TableDescription{ProvisionedThroughput: pt(5, 7), GlobalSecondaryIndexes: gsi(pt(2, 3))},
			types.BillingModeProvisioned, &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(7)}},
		{"no summary, read capacity 1", types.TableDescription{ProvisionedThroughput: pt(1, 1)},
			types.BillingModeProvisioned, &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}},
		{"no summary, zero capacity", types.TableDescription{ProvisionedThroughput: pt(0, 0), GlobalSecondaryIndexes: gsi(pt(0, 0))},
			types.BillingModePayPerRequest, nil},
		{"no summary, no throughput", types.TableDescription{}, types.BillingModePayPerRequest, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			in := restoreInput(&src, &Plan{Source: "dev-hoge-user", Target: "dev-hoge-user-r", Latest: true})
			assert.Equal(t, c.want, in.BillingModeOverride)
			assert.Equal(t, c.cap, in.ProvisionedThroughputOverride)
			for i, g := range in.GlobalSecondaryIndexOverride {
				if c.want == types.BillingModeProvisioned {
					assert.Equal(t, throughput(src.GlobalSecondaryIndexes[i].ProvisionedThroughput), g.ProvisionedThroughput, "the index keeps its capacity")
				} else {
					assert.Nil(t, g.ProvisionedThroughput, "an on-demand index has no capacity")
				}
			}
		})
	}
}

// TestRestoreInputEncryption: the restore keeps the source's encryption
// (DDB-SEC-04): a customer managed key by its ARN, the AWS managed key
// without one, the AWS owned key (no SSEDescription, or not ENABLED) off.
func TestRestoreInputEncryption(t *testing.T) {
	kms := "arn:aws:kms:eu-west-1:123456789012:key/abc"
	cases := []struct {
		name string
		sse  *types.SSEDescription
		want *types.SSESpecification
	}{
		{"customer managed key", &types.SSEDescription{Status: types.SSEStatusEnabled, SSEType: types.SSETypeKms, KMSMasterKeyArn: &kms},
			&types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: &kms}},
		{"AWS managed key (KMS, no key ARN)", &types.SSEDescription{Status: types.SSEStatusEnabled, SSEType: types.SSETypeKms},
			&types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms}},
		{"AES256 with a key ARN is not a customer key", &types.SSEDescription{Status: types.SSEStatusEnabled, SSEType: types.SSETypeAes256, KMSMasterKeyArn: &kms},
			&types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeAes256}},
		{"being disabled", &types.SSEDescription{Status: types.SSEStatusDisabling, SSEType: types.SSETypeKms, KMSMasterKeyArn: &kms},
			&types.SSESpecification{Enabled: aws.Bool(false)}},
		{"AWS owned key", nil, &types.SSESpecification{Enabled: aws.Bool(false)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := restoreInput(&types.TableDescription{SSEDescription: c.sse}, &Plan{Source: "a", Target: "b", Latest: true})
			assert.Equal(t, c.want, in.SSESpecificationOverride)
		})
	}
}

func TestRetargetResourcePolicy(t *testing.T) {
	src := "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"
	policy := `{"Statement":[{"Resource":["` + src + `","` + src + `/index/*","arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user-access-log"]}]}`
	got := retarget(policy, src, "prod-hoge-user-restored-x")
	assert.Equal(t, `{"Statement":[{"Resource":["arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user-restored-x",`+
		`"arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user-restored-x/index/*",`+
		`"arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user-access-log"]}]}`, got,
		"the table and its indexes are renamed; a table whose name only starts the same is not")
	assert.Equal(t, "", retarget("", src, "x"))
}

func TestAdoptionImportBlock(t *testing.T) {
	hcl := Adoption("prod-hoge-user", "prod-hoge-user-restored-20261121t124705z")
	assert.Contains(t, hcl, `import {
  to = module.stack.module.table["user-restored-20261121t124705z"].aws_dynamodb_table.this
  id = "prod-hoge-user-restored-20261121t124705z"
}`)
	assert.Contains(t, hcl, "envs/prod")
	assert.Contains(t, hcl, "`moved` block cannot rename")
	assert.Contains(t, hcl, `terraform state rm 'module.stack.module.table["user"]'`)

	other := Adoption("legacy_users", "legacy_users_restored")
	assert.Contains(t, other, "import {\n  to = aws_dynamodb_table.restored\n  id = \"legacy_users_restored\"\n}")
}
