package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/harness"
)

func makeBucket(t *testing.T) string {
	t.Helper()
	cfg := target.AWSConfig(t)
	bucket := "dev-" + harness.UniqueID() + "-migrate"
	in := &s3.CreateBucketInput{Bucket: &bucket}
	if cfg.Region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}
	}
	_, err := awsclients.New(cfg).S3().CreateBucket(context.Background(), in)
	require.NoError(t, err)
	return bucket
}

// dropImported removes the destinations an import created (with deletion
// protection on) once the test ends, so the next test starts without them.
func dropImported(t *testing.T, db *dynamodb.Client) {
	t.Cleanup(func() {
		ctx := context.Background()
		for usage := range destinations(t) {
			name := "dev-" + product + "-" + usage
			_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name, DeletionProtectionEnabled: new(false)})
			_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
		}
	})
}

// Destinations created by ImportTable: the export's files are routed into
// one DynamoDB JSON prefix per destination, each destination is created by
// an import (the binary SIGKILLed part way, and run again), given the
// guideline settings and read back; dynops prints the tables.yaml entries
// and import blocks; with a concurrent writer, the catch-up from the
// export's time and verify then find 0 differences.
func TestBackfillImportCreatesDestinations(t *testing.T) {
	d := setup(t, false)
	dropImported(t, d.db)
	d.populate(t, 600)
	time.Sleep(1100 * time.Millisecond)
	exportTime := time.Now().UTC()
	dir := writeSourceExport(t, d, exportTime, 8, source)
	bucket := makeBucket(t)
	w := d.startWriter(t, 600, 20)
	defer w.halt()

	tmp := t.TempDir()
	state, auditLog := filepath.Join(tmp, "state.json"), filepath.Join(tmp, "audit.jsonl")
	common := []string{"--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched"}
	imp := []string{"--from-export", dir, "--import-to", "s3://" + bucket + "/imp", "--export-parallel", "1", "--unverified-exports", unverifiedReason}

	args := append(append([]string{"migrate", "backfill"}, imp...), common...)
	cmd := target.Command(t, args, harness.AuditLog(auditLog))
	cmd.Start()
	exited := cmd.Done()
	staged := func() int {
		st, err := migrate.LoadState(state)
		if err != nil || st.Backfill == nil || st.Backfill.Export == nil {
			return 0
		}
		return len(st.Backfill.Export.Files)
	}
	killed := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case <-exited:
		default:
			if staged() >= 2 {
				require.NoError(t, cmd.Signal(syscall.SIGKILL))
				killed = true
			}
		}
		if killed || ended(exited) {
			break
		}
	}
	<-exited
	t.Logf("killed part way: %v (%d of 8 files staged)", killed, staged())

	out, errOut, code := target.Dynops(t, auditLog, append(append([]string{"migrate", "backfill"}, imp...), common...)...)
	require.Equal(t, 0, code, errOut+out)
	assert.Contains(t, out, "# envs/tables.yaml entry for")
	assert.Contains(t, out, "import {")
	st := readState(t, state)
	assertCreatedByImport(t, d, st)
	// Every staged object is DynamoDB JSON lines {"Item": {...}}, gzip.
	objs, err := awsclients.New(target.AWSConfig(t)).S3().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: new("imp/")})
	require.NoError(t, err)
	require.NotEmpty(t, objs.Contents)
	for _, o := range objs.Contents {
		assert.Regexp(t, `^imp/dev-[a-z0-9-]+/data/[^/]+\.json\.gz$`, *o.Key)
	}

	_, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "catch-up"}, common...)...)
	require.Equal(t, 0, code)
	w.halt()
	require.Positive(t, w.puts.Load()+w.updates.Load()+w.moves.Load()+w.deletes.Load())
	time.Sleep(time.Second)
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "catch-up"}, common...)...)
	require.Equal(t, 0, code, out)
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "verify"}, common[:6]...)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "0 differences")
	audit, err := os.ReadFile(auditLog)
	require.NoError(t, err)
	for _, a := range []string{`"import-destinations"`, `"import-table"`, `"apply-setting"`} {
		assert.Contains(t, string(audit), a)
	}
}

func backfillWritten(st *migrate.State) map[string]int64 {
	out := map[string]int64{}
	for _, f := range st.Backfill.Export.Files {
		for t, n := range f.Written {
			out[t] += n
		}
	}
	return out
}

// --import-to refuses a destination that exists (ImportTable creates it)
// before anything is written: no state, no file, no table.
func TestBackfillImportRefusesExistingDestination(t *testing.T) {
	d := setup(t, false)
	d.populate(t, 60)
	dir := writeSourceExport(t, d, time.Now().UTC(), 2, source)
	bucket := makeBucket(t)
	existing := ""
	for usage, spec := range destinations(t) {
		existing = "dev-" + product + "-" + usage
		createTable(t, d.db, existing, spec, false)
		break
	}
	tmp := t.TempDir()
	state := filepath.Join(tmp, "state.json")
	_, errOut, code := target.Dynops(t, filepath.Join(tmp, "audit.jsonl"), "migrate", "backfill", "--source", source, "--routes", routesFile(),
		"--state", state, "--allow-unmatched", "--from-export", dir, "--import-to", "s3://"+bucket+"/imp", "--unverified-exports", unverifiedReason)
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "destination "+existing+" exists")
	assert.Contains(t, errOut, "nothing was written")
	_, err := os.Stat(state)
	assert.True(t, os.IsNotExist(err), "no state file")
	objs, err := awsclients.New(target.AWSConfig(t)).S3().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket})
	require.NoError(t, err)
	assert.Empty(t, objs.Contents, "no file written")
	for usage := range destinations(t) {
		name := "dev-" + product + "-" + usage
		if name == existing {
			continue
		}
		_, err := d.db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
		var nf *dbtypes.ResourceNotFoundException
		assert.ErrorAs(t, err, &nf, "%s was not created", name)
	}

	_, errOut, code = target.Dynops(t, filepath.Join(tmp, "audit.jsonl"), "migrate", "backfill", "--source", source, "--routes", routesFile(),
		"--state", state, "--import-to", "s3://"+bucket+"/imp")
	assert.Equal(t, 2, code, errOut)
	assert.True(t, strings.Contains(errOut, "--import-to needs the export"), errOut)
}

// On AWS, the whole path inside DynamoDB's own services: dynops starts the
// point-in-time export (--export-to), routes its files into per-destination
// DynamoDB JSON under --import-to, creates each destination with
// ImportTable, applies and reads back the settings an import cannot set;
// the catch-up from the export's time and verify then find 0 differences.
func TestBackfillExportToImportToOnAWS(t *testing.T) {
	target.RequireAWS(t, "writes no manifests with its exports (the export path reads them), so the export must come from AWS itself")
	ctx := context.Background()
	d := setup(t, false)
	dropImported(t, d.db)
	d.populate(t, 300)
	_, err := d.db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: new(source),
		PointInTimeRecoverySpecification: &dbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: new(true)}})
	require.NoError(t, err)
	bucket := makeBucket(t)
	tmp := t.TempDir()
	state, auditLog := filepath.Join(tmp, "state.json"), filepath.Join(tmp, "audit.jsonl")
	common := []string{"--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched"}
	out, errOut, code := target.Dynops(t, auditLog, append([]string{"migrate", "backfill", "--export-to", "s3://" + bucket + "/export",
		"--import-to", "s3://" + bucket + "/import", "--wait-timeout", "60m"}, common...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "# envs/tables.yaml entry for")
	st := readState(t, state)
	require.NotNil(t, st.Backfill.Export)
	assert.NotEmpty(t, st.Backfill.Export.Arn, "the export dynops started")
	assertCreatedByImport(t, d, st)
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "catch-up"}, common...)...)
	require.Equal(t, 0, code, out)
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "verify"}, common[:6]...)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "0 differences")
}

// assertCreatedByImport checks each destination of a backfill with
// --import-to: created by an import that COMPLETED with every staged item
// (DescribeImport), the guideline settings read back, the imported-from
// tag, and the items it holds counted.
func assertCreatedByImport(t *testing.T, d *domain, st *migrate.State) {
	t.Helper()
	require.NotNil(t, st.Backfill.Export)
	is := st.Backfill.Export.Import
	require.NotNil(t, is)
	for table, n := range backfillWritten(st) {
		it := is.Tables[table]
		require.NotNil(t, it, "%s created by import", table)
		assert.Equal(t, "COMPLETED", it.Status, table)
		assert.Equal(t, n, it.Imported, "%s: every staged item imported (read back with DescribeImport)", table)
		require.NotNil(t, it.ReadBack, table)
		assert.True(t, it.ReadBack.PITR, table)
		assert.True(t, it.ReadBack.DeletionProtection, table)
		assert.Equal(t, "NEW_AND_OLD_IMAGES", it.ReadBack.StreamViewType, table)
		assert.Contains(t, it.ReadBack.Tags, export.TagImportedFrom, table)
		got, err := export.CountTableItems(context.Background(), d.db, table)
		require.NoError(t, err)
		assert.Equal(t, n, got, "%s holds what was staged for it", table)
	}
}

// ended reports whether done is closed (a process has ended).
func ended(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
