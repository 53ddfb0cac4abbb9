package revert_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// target is the emulator this package's tests start (DYNOPS_TEST_TARGET=aws: real AWS).
var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// window is a table and the one incremental export of a bad window in its
// bucket: user 1's status set to "bad" and user 9 inserted.
type window struct {
	db            *dynamodb.Client
	table, bucket string
	args          []string // export revert of the window, without --yes
}

func newWindow(t *testing.T) window {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	w := window{db: dynamodb.NewFromConfig(cfg), table: "dev-" + id + "-user", bucket: "dev-" + id + "-exports"}
	store := awsclients.New(cfg).S3()
	_, err := store.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &w.bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	fixture.Create(t, w.db, fixture.Table{Name: w.table, HashKey: "user_id"})
	users := fixture.Users(10)
	fixture.Put(t, w.db, w.table, users[:3])
	arn, err := export.TableArn(ctx, w.db, w.table)
	require.NoError(t, err)

	// The window: what the table holds after it, and its export.
	bad := map[string]types.AttributeValue{}
	for k, v := range users[1] {
		bad[k] = v
	}
	bad["status"] = &types.AttributeValueMemberS{Value: "bad"}
	fixture.Put(t, w.db, w.table, []map[string]types.AttributeValue{bad, users[9]})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	records := []exporttest.Record{
		{Keys: exporttest.Image(t, fixture.UserKey(1)), Old: exporttest.Image(t, users[1]), New: exporttest.Image(t, bad), Micros: t0.Add(time.Minute).UnixMicro()},
		{Keys: exporttest.Image(t, fixture.UserKey(9)), New: exporttest.Image(t, users[9]), Micros: t0.Add(2 * time.Minute).UnixMicro()},
	}
	root := t.TempDir()
	_, err = exporttest.Write(root, exporttest.Spec{Prefix: "incident/INC-42/incremental", ExportID: "01772326800000-r0000001",
		Incremental: true, View: "NEW_AND_OLD_IMAGES", From: t0, To: t0.Add(time.Hour), Records: [][]exporttest.Record{records},
		TableArn: arn, Bucket: w.bucket, EndTime: time.Now().Add(10 * time.Minute)})
	require.NoError(t, err)
	require.NoError(t, exporttest.Upload(ctx, store, w.bucket, root))
	w.args = []string{"export", "revert", "--bucket", w.bucket, "--prefix", "incident/INC-42/incremental", "--table", w.table}
	return w
}

// state is user i's status, or "absent".
func (w window) state(t *testing.T, i int) string {
	t.Helper()
	it := fixture.Get(t, w.db, w.table, fixture.UserKey(i))
	if it == nil {
		return "absent"
	}
	return it["status"].(*types.AttributeValueMemberS).Value
}

// run is dynops in-process (cmdtest.Run) against the target.
func run(t *testing.T, auditLog string, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: target.Endpoint(), Region: target.Region, AuditLog: auditLog}, args...)
}

// TestRevertRefusesExportsNobodyVouchesFor: DescribeExport cannot vouch for
// an export the emulator keeps no record of: without --unverified-exports
// the revert is refused with exit 2, naming the flag, and nothing changes.
func TestRevertRefusesExportsNobodyVouchesFor(t *testing.T) {
	w := newWindow(t)
	r := run(t, "", append(w.args, "--yes")...)
	assert.Equal(t, 2, r.Code, r.Stderr)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "--unverified-exports")
	assert.Equal(t, "bad", w.state(t, 1), "nothing reverted")
	assert.Equal(t, "active", w.state(t, 9), "nothing deleted")
}

// TestRevertUndoesTheWindow: a dry run changes nothing; with --yes the
// updated item is put back and the inserted one deleted (read back from the
// service), and the audit records the run as done with its counts.
func TestRevertUndoesTheWindow(t *testing.T) {
	w := newWindow(t)
	log := t.TempDir() + "/audit.jsonl"
	args := append(w.args, "--unverified-exports", "emulator: keeps no export records")
	r := run(t, log, args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "DRY RUN")
	assert.Equal(t, "bad", w.state(t, 1), "a dry run changes nothing")

	r = run(t, log, append(args, "--yes")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "active", w.state(t, 1), "put back as at the window's start")
	assert.Equal(t, "absent", w.state(t, 9), "created in the window: deleted")
	assert.Equal(t, "active", w.state(t, 0), "untouched by the window")
	recs, err := audit.Read(log)
	require.NoError(t, err)
	last := recs[len(recs)-1]
	assert.Equal(t, audit.EventFinished, last.Event)
	assert.Equal(t, audit.ResultOK, last.Result)
	assert.Equal(t, int64(1), last.Counts["restores"])
	assert.Equal(t, int64(1), last.Counts["deletes"])
}
