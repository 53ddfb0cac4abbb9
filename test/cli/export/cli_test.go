package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/exportwindow"
	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/harness"
)

const drRegion = "eu-central-1"

// fixture is a table with PITR and items, and a bucket, on the target.
type fixture struct {
	table  string
	arn    string // the table's ARN
	bucket string
	items  int
	db     *dynamodb.Client
	s3     *s3.Client
	audit  string
}

func newFixture(t *testing.T, items int) fixture {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	fx := fixture{table: "dev-" + id + "-user", bucket: "dev-" + id + "-exports", items: items,
		db: dynamodb.NewFromConfig(cfg), s3: awsclients.New(cfg).S3(), audit: filepath.Join(t.TempDir(), "audit.jsonl")}
	_, err := fx.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &fx.bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	_, err = fx.db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &fx.table, BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}}})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(ctx, fx.db, fx.table, nil))
	fx.arn, err = export.TableArn(ctx, fx.db, fx.table)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = fx.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &fx.table})
	})
	for i := 0; i < items; i++ {
		_, err := fx.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &fx.table, Item: map[string]types.AttributeValue{
			"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("u%03d", i)},
			"email":   &types.AttributeValueMemberS{Value: fmt.Sprintf("u%03d@example.com", i)},
			"logins":  &types.AttributeValueMemberN{Value: fmt.Sprint(i)},
		}})
		require.NoError(t, err)
	}
	_, err = fx.db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &fx.table,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}})
	require.NoError(t, err)
	return fx
}

func (fx fixture) dynops(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return target.Dynops(t, fx.audit, args...)
}

// TestFullExportVerifyAndCrossRegionImport_DDB_DR_01 is the DR drill: full
// export, verify, import into another region, guideline settings re-applied.
func TestFullExportVerifyAndCrossRegionImport_DDB_DR_01(t *testing.T) {
	fx := newFixture(t, 25)
	ctx := context.Background()

	out, _, code := fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket, "--prefix", "drill", "--wait", "-o", "json")
	require.Equal(t, 0, code)
	var started []export.Export
	require.NoError(t, json.Unmarshal([]byte(out), &started))
	require.Len(t, started, 1)
	assert.Equal(t, exportwindow.Completed, started[0].Status)
	require.NotNil(t, started[0].Items)
	assert.EqualValues(t, fx.items, *started[0].Items)

	out, _, code = fx.dynops(t, "export", "list", "--table", fx.table)
	require.Equal(t, 0, code)
	assert.Contains(t, out, started[0].Arn)
	out, _, code = fx.dynops(t, "export", "status", started[0].Arn)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "COMPLETED")

	t.Run("verify", func(t *testing.T) {
		if target.OnEmulator() {
			// moto writes data files but no manifests: manifest mode must say so.
			_, errOut, code := fx.dynops(t, "export", "verify", "--bucket", fx.bucket, "--prefix", "drill")
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, "no manifest-summary.json under s3://"+fx.bucket+"/drill")
			// Data without manifests names no export DynamoDB could vouch
			// for: refused (exit 2) until a reason accepts it, audited.
			_, errOut, code = fx.dynops(t, "export", "verify", "--bucket", fx.bucket, "--prefix", "drill", "--data-only")
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, "no manifest-summary.json: nothing names an export DynamoDB could answer for")
			assert.Contains(t, errOut, "--unverified-exports")
			out, errOut, code := fx.dynops(t, append([]string{"export", "verify", "--bucket", fx.bucket, "--prefix", "drill", "--data-only", "-o", "json"}, unverified...)...)
			require.Equal(t, 0, code)
			assert.Contains(t, errOut, "UNVERIFIED", "who vouched is printed")
			assertVouchedAudited(t, fx.audit, "emulator: keeps no export records")
			var rep exportverify.Report
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.True(t, rep.OK)
			assert.EqualValues(t, fx.items, rep.Items, "every exported item decodes")
			return
		}
		_, _, code := fx.dynops(t, "export", "verify", "--bucket", fx.bucket, "--prefix", "drill")
		assert.Equal(t, 0, code)
	})

	newTable := "dev-" + harness.UniqueID() + "-user"
	importArgs := []string{"export", "import", "--bucket", fx.bucket, "--prefix", "drill", "--table", newTable,
		"--schema-from", fx.table, "--source-region", target.Region, "--tag", "env=dev", "--tag", "usage=user"}
	if target.OnEmulator() {
		t.Run("the emulator's export, without manifests, is refused without --unverified-exports", func(t *testing.T) {
			out, errOut, code := target.DynopsInRegion(t, drRegion, fx.audit, append(importArgs, "--yes")...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "DynamoDB does not vouch for the export")
			assert.Contains(t, errOut, "s3://"+fx.bucket+"/drill/", "names where it looked")
			_, err := drDB(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &newTable})
			var rnf *types.ResourceNotFoundException
			assert.ErrorAs(t, err, &rnf, "a refused import creates nothing")
		})
		importArgs = append(importArgs, unverified...)
	}

	t.Run("dry run changes nothing", func(t *testing.T) {
		out, _, code := target.DynopsInRegion(t, drRegion, fx.audit, importArgs...)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "DRY RUN")
		assert.Contains(t, out, "deletion-protection")
		_, err := drDB(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &newTable})
		var rnf *types.ResourceNotFoundException
		assert.ErrorAs(t, err, &rnf, "a dry run must not create %s", newTable)
	})

	out, _, code = target.DynopsInRegion(t, drRegion, fx.audit, append(importArgs, "--yes", "-o", "json")...)
	require.Equal(t, 0, code)
	var res struct {
		Import     export.Import           `json:"import"`
		TableItems *int64                  `json:"table_items"`
		Region     string                  `json:"region"`
		Applied    []tablesettings.Change  `json:"applied"`
		ReadBack   *tablesettings.Settings `json:"settings_read_back"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, drRegion, res.Region)
	require.NotNil(t, res.TableItems, "the items are counted, not assumed")
	assert.EqualValues(t, fx.items, *res.TableItems, "the imported table holds every item")
	assert.Equal(t, "COMPLETED", res.Import.Status, "read back with DescribeImport")
	require.NotNil(t, res.ReadBack, "the settings are read back from the service")
	assert.True(t, res.ReadBack.PITR && res.ReadBack.DeletionProtection, "read back: PITR and deletion protection on")
	assert.NotEmpty(t, res.Applied)

	db := drDB(t)
	t.Cleanup(func() { deleteProtected(db, newTable) })
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &newTable})
	require.NoError(t, err)
	assert.Contains(t, aws.ToString(dt.Table.TableArn), ":"+drRegion+":", "the table is in the DR region")
	got, err := tablesettings.Capture(ctx, db, newTable)
	require.NoError(t, err)
	t.Run("DDB-PITR-02 guideline settings re-applied after the import", func(t *testing.T) {
		assert.True(t, got.PITR, "DDB-PITR-01")
		assert.EqualValues(t, 35, got.RecoveryPeriodInDays)
		assert.True(t, got.DeletionProtection, "DDB-PROT-01")
		assert.Equal(t, "NEW_AND_OLD_IMAGES", got.StreamViewType, "DDB-STREAM-01")
		assert.Equal(t, "ttl", got.TTLAttribute, "DDB-NAME-03")
		assert.Equal(t, "dev", got.Tags["env"])
		assert.Equal(t, "s3://"+fx.bucket+"/", got.Tags["dynops:imported-from"][:len("s3://"+fx.bucket+"/")])
	})

	t.Run("a second import into the same table is refused and changes nothing", func(t *testing.T) {
		_, errOut, code := target.DynopsInRegion(t, drRegion, fx.audit, append(importArgs, "--yes")...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "already exists in "+drRegion)
	})
	t.Run("the dry run checks that the target does not exist", func(t *testing.T) {
		out, errOut, code := target.DynopsInRegion(t, drRegion, fx.audit, importArgs...)
		assert.Equal(t, 2, code)
		assert.NotContains(t, out, "DRY RUN")
		assert.Contains(t, errOut, "--table "+newTable+" already exists")
	})
}

func drDB(t *testing.T) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsclients.ForRegion(target.AWSConfig(t), drRegion))
}

func deleteProtected(db *dynamodb.Client, table string) {
	ctx := context.Background()
	_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &table, DeletionProtectionEnabled: aws.Bool(false)})
	_ = tablesettings.WaitActive(ctx, db, table, nil)
	_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &table})
}

// upload copies a local export directory into the bucket as AWS stores an
// export (data files as one-part multipart uploads: ETag "<hex>-1").
func upload(t *testing.T, fx fixture, root string) {
	t.Helper()
	require.NoError(t, exporttest.Upload(context.Background(), fx.s3, fx.bucket, root))
}

// TestImportVerifiesFirst: a damaged export (the class: truncated, missing,
// changed data file; changed or missing manifest checksum) is refused before
// ImportTable, nothing is created, and the refusal names the file. --prefix
// matches by path segment: a sibling "a-full-old" export is not picked up.
func TestImportVerifiesFirst(t *testing.T) {
	fx := newFixture(t, 0)
	ctx := context.Background()
	damage := map[string]func(w exporttest.Written) error{
		"truncated data file": func(w exporttest.Written) error {
			return fx.cut(ctx, w.DataKeys[0], 0.5)
		},
		"missing data file": func(w exporttest.Written) error {
			_, err := fx.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &fx.bucket, Key: &w.DataKeys[1]})
			return err
		},
		"manifest changed after its checksum": func(w exporttest.Written) error {
			_, err := fx.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &fx.bucket, Key: &w.FilesKey, Body: strings.NewReader("")})
			return err
		},
		"checksum file missing": func(w exporttest.Written) error {
			_, err := fx.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &fx.bucket, Key: &w.Checksums[0]})
			return err
		},
	}
	i := 0
	for name, hurt := range damage {
		i++
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			prefix := fmt.Sprintf("dr/%d/a-full", i)
			w, err := exporttest.Write(root, fx.spec(exporttest.Spec{Prefix: prefix, ExportID: "01772323200000-aaaa0001", FileItems: []int{4, 3}}))
			require.NoError(t, err)
			_, err = exporttest.Write(root, fx.spec(exporttest.Spec{Prefix: prefix + "-old", ExportID: "01772323200000-bbbb0002", FileItems: []int{2}}))
			require.NoError(t, err)
			upload(t, fx, root)
			require.NoError(t, hurt(w))
			newTable := "dev-" + harness.UniqueID() + "-user"
			_, errOut, code := target.DynopsInRegion(t, drRegion, fx.audit, append([]string{"export", "import", "--bucket", fx.bucket, "--bucket-region", target.Region,
				"--prefix", prefix, "--table", newTable, "--hash-key", "user_id:S", "--yes"}, unverified...)...)
			assert.NotEqual(t, 0, code)
			// A missing or emptied file is already a contradiction to the
			// vouching (it lists the data files); the rest fail verification.
			assert.Regexp(t, "failed verification|the export is not what it claims", errOut)
			assert.NotContains(t, errOut, "2 exports under", "the a-full-old sibling is not under a-full")
			_, err = drDB(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &newTable})
			var rnf *types.ResourceNotFoundException
			assert.ErrorAs(t, err, &rnf, "a refused import must not create %s", newTable)
		})
	}
}

// cut replaces an object with its first frac of bytes.
func (fx fixture) cut(ctx context.Context, key string, frac float64) error {
	out, err := fx.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &fx.bucket, Key: &key})
	if err != nil {
		return err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return err
	}
	_, err = fx.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &fx.bucket, Key: &key, Body: bytes.NewReader(b[:int(float64(len(b))*frac)])})
	return err
}

// TestVerifyManifestsInS3 verifies exports written in the documented AWS
// layout (full and incremental) through S3, then damages them.
func TestVerifyManifestsInS3(t *testing.T) {
	fx := newFixture(t, 0)
	ctx := context.Background()
	root := t.TempDir()
	full, err := exporttest.Write(root, fx.spec(exporttest.Spec{Prefix: "scheduled/full", ExportID: "01772323200000-aaaa0001", FileItems: []int{40, 35, 0}}))
	require.NoError(t, err)
	incr, err := exporttest.Write(root, fx.spec(exporttest.Spec{Prefix: "scheduled/incremental", ExportID: "01772326800000-bbbb0002", Incremental: true, FileItems: []int{12, 9}}))
	require.NoError(t, err)
	upload(t, fx, root)

	for _, c := range []struct {
		prefix string
		items  int64
	}{{"scheduled/full", full.Items}, {"scheduled/incremental", incr.Items}} {
		_, errOut, code := fx.dynops(t, "export", "verify", "--bucket", fx.bucket, "--prefix", c.prefix)
		assert.Equal(t, 2, code, "DynamoDB knows no such export: refused without a reason (%s)", errOut)
		assert.Contains(t, errOut, "DescribeExport cannot vouch for it")
		out, _, code := fx.dynops(t, append([]string{"export", "verify", "--bucket", fx.bucket, "--prefix", c.prefix, "-o", "json"}, unverified...)...)
		require.Equal(t, 0, code, c.prefix)
		var rep exportverify.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.True(t, rep.OK, c.prefix)
		assert.Equal(t, c.items, rep.Items, c.prefix)
	}

	// A missing data file is a contradiction to the vouching (exit 2, the
	// file named) before anything is read; put back, a corrupt one is the
	// verification's finding (exit 1, named).
	_, err = fx.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &fx.bucket, Key: &full.DataKeys[0]})
	require.NoError(t, err)
	_, errOut, code := fx.dynops(t, append([]string{"export", "verify", "--bucket", fx.bucket, "--prefix", "scheduled/full"}, unverified...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, full.DataKeys[0])
	require.NoError(t, exporttest.UploadKeys(ctx, fx.s3, fx.bucket, root, full.DataKeys[0]))
	_, err = fx.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &fx.bucket, Key: &full.DataKeys[1], Body: strings.NewReader("\x1f\x8bnot really gzip")})
	require.NoError(t, err)
	out, _, code := fx.dynops(t, append([]string{"export", "verify", "--bucket", fx.bucket, "--prefix", "scheduled/full"}, unverified...)...)
	assert.Equal(t, 1, code)
	assert.Regexp(t, full.DataKeys[1]+`\s+corrupt`, out)
	assert.Contains(t, out, "FAILED")
}

// TestSeriesFromCheckpoint runs the checkpointed series through the CLI on
// the target: the first step is the full baseline, the checkpoint moves to
// its export time only once it COMPLETED, and a stale writer is refused.
func TestSeriesFromCheckpoint(t *testing.T) {
	fx := newFixture(t, 5)
	ctx := context.Background()
	cpTable := "dev-" + harness.UniqueID() + "-export-checkpoint"
	_, err := fx.db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &cpTable, BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("table_name"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("table_name"), AttributeType: types.ScalarAttributeTypeS}}})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(ctx, fx.db, cpTable, nil))
	args := []string{"export", "incremental", "--table", fx.table, "--bucket", fx.bucket, "--prefix", "series/" + fx.table,
		"--since-checkpoint", "--checkpoint-table", cpTable}

	store := export.CheckpointStore{DB: fx.db, Table: cpTable}
	_, _, code := fx.dynops(t, args...)
	require.Equal(t, 0, code)
	st, err := store.Load(ctx, fx.table)
	require.NoError(t, err)
	require.NotNil(t, st.InFlight, "the first step records the full export in flight")
	assert.Equal(t, exportwindow.Full, st.InFlight.Type)
	assert.NotEmpty(t, st.InFlight.ExportArn)
	assert.True(t, st.Checkpoint.IsZero(), "no checkpoint before the full export completed")

	_, _, code = fx.dynops(t, append(args, "--wait")...)
	require.Equal(t, 0, code)
	st, err = store.Load(ctx, fx.table)
	require.NoError(t, err)
	assert.Nil(t, st.InFlight)
	tbl, err := export.DescribeTable(ctx, fx.db, fx.table)
	require.NoError(t, err)
	assert.True(t, tbl.PITR.Latest.Equal(st.Checkpoint), "checkpoint %s = the full export's time %s", st.Checkpoint, tbl.PITR.Latest)

	if target.OnEmulator() {
		// moto freezes the PITR window when PITR is enabled: nothing more is due.
		out, _, code := fx.dynops(t, args...)
		require.Equal(t, 0, code)
		assert.Contains(t, out, string(exportwindow.UpToDate))
	}

	t.Run("a stale writer is refused (conditional write)", func(t *testing.T) {
		stale := st
		stale.Version--
		_, err := store.Save(ctx, stale, exportwindow.State{Table: fx.table, Checkpoint: st.Checkpoint.Add(time.Hour)})
		assert.ErrorIs(t, err, export.ErrConflict)
		now, err := store.Load(ctx, fx.table)
		require.NoError(t, err)
		assert.Equal(t, st.Checkpoint, now.Checkpoint, "the checkpoint did not move")
	})
}

// TestRangeChecks: ranges AWS would refuse are refused before any export.
func TestRangeChecks(t *testing.T) {
	fx := newFixture(t, 1)
	tbl, err := export.DescribeTable(context.Background(), fx.db, fx.table)
	require.NoError(t, err)
	future := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	_, errOut, code := fx.dynops(t, "export", "incremental", "--table", fx.table, "--bucket", fx.bucket,
		"--from", tbl.PITR.Earliest.UTC().Format(time.RFC3339Nano), "--to", future)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "after the latest restorable time")
	_, errOut, code = fx.dynops(t, "export", "incremental", "--table", fx.table, "--bucket", fx.bucket,
		"--from", "2020-01-01T00:00:00Z", "--to", "2020-01-01T01:00:00Z")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "before the table's PITR window")
	_, errOut, code = fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket, "--time", future)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "after the latest restorable time")
}

// TestIncrementalWindowsOnAWS exports a real incremental window and checks
// it holds exactly the change made inside it.
func TestIncrementalWindowsOnAWS(t *testing.T) {
	target.RequireAWS(t, "ignores incremental export windows (it always exports the whole table), freezes the PITR window and writes no manifests")
	fx := newFixture(t, 3)
	ctx := context.Background()
	time.Sleep(16 * time.Minute) // the window must be >= 15 minutes and inside PITR
	from := time.Now().Add(-15 * time.Minute).UTC().Truncate(time.Second)
	_, err := fx.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &fx.table, Item: map[string]types.AttributeValue{
		"user_id": &types.AttributeValueMemberS{Value: "changed"}}})
	require.NoError(t, err)
	time.Sleep(6 * time.Minute) // let PITR's latest restorable time pass the change
	to := time.Now().Add(-5 * time.Minute).UTC().Truncate(time.Second)
	_, _, code := fx.dynops(t, "export", "incremental", "--table", fx.table, "--bucket", fx.bucket, "--prefix", "incr",
		"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--wait")
	require.Equal(t, 0, code)
	out, _, code := fx.dynops(t, "export", "verify", "--bucket", fx.bucket, "--prefix", "incr", "-o", "json")
	require.Equal(t, 0, code)
	var rep exportverify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.EqualValues(t, 1, rep.Items, "only the change inside the window")
}
