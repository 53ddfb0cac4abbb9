package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/harness"
)

// writeSourceExport writes what the source holds now as a full export in
// AWS's format (manifest-summary.json, manifest-files.json, gzip DynamoDB
// JSON data files) under a local folder, as of exportTime, in files data
// files, and returns that folder (a local copy of the export's bucket). moto's own exports write no
// manifests, so the export read here is one dynops did not make itself.
// unverifiedReason accepts the local copies: DescribeExport knows none of
// them, and S3 did not say when their files were written.
const unverifiedReason = "test: a local copy of an export the emulator did not run"

func writeSourceExport(t *testing.T, d *domain, exportTime time.Time, files int, table string) string {
	t.Helper()
	items := scanAll(t, d.db, source)
	recs := make([][]exporttest.Record, files)
	for i, it := range items {
		b, err := ddbjson.EncodeItem(it)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		recs[i%files] = append(recs[i%files], exporttest.Record{New: m})
	}
	root := t.TempDir()
	id := fmt.Sprintf("%014d-m0000001", exportTime.UnixMilli())
	// The manifest names the table as the target's ARNs do (region, account).
	desc, err := d.db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: new(source)})
	require.NoError(t, err)
	tableArn := strings.Replace(*desc.Table.TableArn, ":table/"+source, ":table/"+table, 1)
	_, err = exporttest.Write(root, exporttest.Spec{Prefix: "mig", ExportID: id, ExportTime: exportTime, Records: recs, TableArn: tableArn})
	require.NoError(t, err)
	return root
}

// A backfill from an export (no Scan of the source): the export's files go
// through the routes into the destinations, killed part way and resumed per
// file, while a writer changes the source; the catch-up starts from the
// export's time, and verify then finds 0 differences. A local copy cannot
// be vouched for (DescribeExport does not know it, S3 did not say when its
// files were written): refused
// without --unverified-exports, read (and audited) with it, on each run.
func TestBackfillFromExport(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 600)
	time.Sleep(1100 * time.Millisecond) // the stream's start is in whole seconds: the export comes after it
	exportTime := time.Now().UTC()
	dir := writeSourceExport(t, d, exportTime, 12, source)
	w := d.startWriter(t, 600, 20)
	defer w.halt()

	tmp := t.TempDir()
	state, auditLog := filepath.Join(tmp, "state.json"), filepath.Join(tmp, "audit.jsonl")
	common := []string{"--source", source, "--routes", routesFile(), "--state", state}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return target.Dynops(t, auditLog, append(args, common...)...)
	}

	out, errOut, code := run("migrate", "backfill", "--allow-unmatched", "--from-export", dir)
	assert.Equal(t, 1, code, "a migration's refusal: %s", errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "DynamoDB does not vouch for the export")
	assert.Contains(t, errOut, "--unverified-exports")
	assert.NoFileExists(t, state, "refused before the stream position is recorded")

	// The real binary, slowed by its write cap, killed once files are done.
	args := append([]string{"migrate", "backfill", "--allow-unmatched", "--from-export", dir, "--export-parallel", "2", "--unverified-exports", unverifiedReason,
		"--max-writes-per-second", "200"}, common...)
	cmd := target.Command(t, args, harness.AuditLog(auditLog))
	cmd.Start()
	filesDone := func() int {
		st, err := migrate.LoadState(state)
		if err != nil || st.Backfill == nil || st.Backfill.Export == nil {
			return 0
		}
		return len(st.Backfill.Export.Files)
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && filesDone() < 3; {
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, cmd.Signal(syscall.SIGKILL))
	cmd.Wait()
	st := readState(t, state)
	require.NotNil(t, st.Position, "the stream position is recorded before the first write")
	assert.True(t, st.Position.Time.Equal(exportTime.Truncate(time.Millisecond)), "the catch-up starts at the export's time: %s, export %s", st.Position.Time, exportTime)
	require.NotNil(t, st.Backfill.Export)
	assert.Empty(t, st.Backfill.Segments, "no Scan of the source")
	done := len(st.Backfill.Export.Files)
	require.False(t, st.BackfillDone(), "killed part way (%d of 12 files done)", done)
	require.GreaterOrEqual(t, done, 3)

	// Resumed without naming the export again: the state knows it; the
	// reason to read it unverified is given again.
	out, _, code = run("migrate", "backfill", "--allow-unmatched", "-o", "json", "--unverified-exports", unverifiedReason)
	require.Equal(t, 0, code, out)
	var res migrate.BackfillResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.True(t, res.Resumed)
	assert.Len(t, res.Export.Files, 12)
	assert.EqualValues(t, 600, res.Read, "every exported item read once in the state (a killed file is read again, counted once)")
	assert.Less(t, res.ReadThisRun, int64(600), "the resumed run skips the files already written")
	out, _, code = run("migrate", "backfill", "--allow-unmatched", "--unverified-exports", unverifiedReason)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "finished already")

	_, _, code = run("migrate", "catch-up", "--allow-unmatched")
	require.Equal(t, 0, code)
	w.halt()
	require.Positive(t, w.puts.Load()+w.updates.Load()+w.moves.Load()+w.deletes.Load(), "the writer changed the source after the export")
	time.Sleep(time.Second)
	out, _, code = run("migrate", "catch-up", "--allow-unmatched")
	require.Equal(t, 0, code, out)
	out, _, code = run("migrate", "verify")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "0 differences")
}

// An export the catch-up cannot follow is refused before anything is
// written: older than the stream's records, taken before the stream was
// enabled, of another table, or both --from-export and --export-to.
func TestBackfillFromExportRefused(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 60)
	desc, err := d.db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: new(source)})
	require.NoError(t, err)
	sd, err := dynamodbstreams.NewFromConfig(target.AWSConfig(t)).DescribeStream(context.Background(),
		&dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	require.NoError(t, err)
	enabled := sd.StreamDescription.CreationRequestDateTime
	now := time.Now().UTC()
	cases := []struct {
		name string
		args func(t *testing.T) []string
		code int
		want []string
	}{
		{"older than the stream's 24 hours", func(t *testing.T) []string {
			return []string{"--from-export", writeSourceExport(t, d, now.Add(-25*time.Hour), 2, source)}
		}, 1, []string{now.Add(-25 * time.Hour).Format("2006-01-02T15:04"), "keeps records for 24h0m0s", "Take a new export"}},
		{"of another table", func(t *testing.T) []string {
			return []string{"--from-export", writeSourceExport(t, d, now, 2, "dev-aiagent-other")}
		}, 1, []string{"its manifest says table ", ":table/dev-aiagent-other, not ", ":table/" + source}},
		{"both sources", func(t *testing.T) []string {
			return []string{"--from-export", t.TempDir(), "--export-to", "s3://b/p"}
		}, 2, []string{"--from-export and --export-to both given"}},
		{"a bucket-less target", func(t *testing.T) []string { return []string{"--export-to", "s3:///p"} }, 2, []string{"--export-to", "s3://BUCKET/PREFIX"}},
		{"not an export", func(t *testing.T) []string { return []string{"--from-export", t.TempDir()} }, 1, []string{"no manifest-summary.json"}},
	}
	if enabled != nil {
		before := enabled.Add(-10 * time.Minute).UTC()
		cases = append(cases, struct {
			name string
			args func(t *testing.T) []string
			code int
			want []string
		}{"taken before the stream was enabled", func(t *testing.T) []string {
			return []string{"--from-export", writeSourceExport(t, d, before, 2, source)}
		}, 1, []string{"was enabled at", "after the export's time"}})
	} else {
		t.Log("the emulator's DescribeStream gives no CreationRequestDateTime: the stream-start case is not run here")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := destinationCounts(t, d.db)
			tmp := t.TempDir()
			state := filepath.Join(tmp, "state.json")
			args := append([]string{"migrate", "backfill", "--allow-unmatched", "--source", source, "--routes", routesFile(), "--state", state,
				"--unverified-exports", unverifiedReason}, c.args(t)...)
			_, errOut, code := target.Dynops(t, filepath.Join(tmp, "audit.jsonl"), args...)
			assert.Equal(t, c.code, code, errOut)
			for _, w := range c.want {
				assert.Contains(t, errOut, w)
			}
			_, err := os.Stat(state)
			assert.True(t, os.IsNotExist(err), "no state file is written")
			assert.Equal(t, before, destinationCounts(t, d.db), "nothing written to the destinations")
		})
	}
}

// --export-to on AWS: dynops starts the point-in-time export itself, waits
// for it and reads its files; the catch-up then starts from its time.
func TestBackfillExportToOnAWS(t *testing.T) {
	target.RequireAWS(t, "writes no manifests with its exports (the export path reads them)")
	ctx := context.Background()
	d := setup(t, true)
	d.populate(t, 300)
	_, err := d.db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: new(source),
		PointInTimeRecoverySpecification: &dbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: new(true)}})
	require.NoError(t, err)
	cfg := target.AWSConfig(t)
	bucket := "dev-" + harness.UniqueID() + "-migrate"
	s3c := awsclients.New(cfg).S3()
	_, err = s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	tmp := t.TempDir()
	state, auditLog := filepath.Join(tmp, "state.json"), filepath.Join(tmp, "audit.jsonl")
	common := []string{"--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched"}
	out, errOut, code := target.Dynops(t, auditLog, append([]string{"migrate", "backfill", "--export-to", "s3://" + bucket + "/migrate", "--wait-timeout", "45m"}, common...)...)
	require.Equal(t, 0, code, errOut)
	st := readState(t, state)
	require.NotNil(t, st.Backfill.Export)
	assert.NotEmpty(t, st.Backfill.Export.Arn)
	assert.Contains(t, st.Backfill.Export.URI, "s3://"+bucket+"/migrate/AWSDynamoDB/")
	assert.False(t, st.Position.Time.After(st.Backfill.Export.Time), "the position is recorded before the export's time")
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "catch-up"}, common...)...)
	require.Equal(t, 0, code, out)
	out, _, code = target.Dynops(t, auditLog, append([]string{"migrate", "verify"}, common[:6]...)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "0 differences")
}
