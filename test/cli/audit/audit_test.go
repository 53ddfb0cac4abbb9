// Package audit tests the audit trail against the target (the emulator by
// default): commands that change things refuse to start when their
// `started` record cannot be written, and the central CloudWatch Logs copy.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// unsafeLogs are audit logs dynops must refuse to write to.
var unsafeLogs = map[string]func(t *testing.T) string{
	"loose mode 0644": func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "audit.jsonl")
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		require.NoError(t, os.Chmod(p, 0o644))
		return p
	},
	"symlink": func(t *testing.T) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "real"), nil, 0o600))
		require.NoError(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "audit.jsonl")))
		return filepath.Join(dir, "audit.jsonl")
	},
	"a directory": func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "audit.jsonl")
		require.NoError(t, os.Mkdir(p, 0o700))
		return p
	},
}

// world is what the destructive commands act on.
type world struct {
	db, dr             *dynamodb.Client
	sqs                *sqs.Client
	s3                 *s3.Client
	table, restored    string
	corrupt            string // a table whose items differ from table
	bucket, exportPath string
	incPrefix          string // an incremental export (export apply)
	incSpec            exporttest.Spec
	queue, dest        string
	pair               drpair.Pair
	// A migration of table into migrated: its routes file and a state file
	// as a backfill leaves it (cutover, rollback and catch-up need one).
	migrated, routes, state string
}

func newWorld(t *testing.T) *world {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	w := &world{db: dynamodb.NewFromConfig(cfg), dr: dynamodb.NewFromConfig(awsclients.ForRegion(cfg, "eu-central-1")),
		sqs: sqs.NewFromConfig(cfg), s3: awsclients.New(cfg).S3(), table: "dev-" + id + "-user", corrupt: "dev-" + id + "-copy",
		restored: "dev-" + id + "-user-restored", bucket: "dev-" + id + "-exports"}
	// A stream: catch-up refuses a source without one (its preflight) before the audit is reached.
	fixture.Create(t, w.db, fixture.Table{Name: w.table, HashKey: "user_id", PITR: true, Stream: true})
	fixture.Put(t, w.db, w.table, fixture.Users(10))
	fixture.Create(t, w.db, fixture.Table{Name: w.corrupt, HashKey: "user_id"})
	bad := fixture.Users(10)
	for _, it := range bad {
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
	}
	fixture.Put(t, w.db, w.corrupt, bad)
	_, err := w.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &w.bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	w.exportPath = "exports/" + w.table + "/good"
	_, _, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "export", "full", "--table", w.table, "--bucket", w.bucket, "--prefix", w.exportPath, "--wait")
	require.Equal(t, 0, code)
	for _, q := range []*string{&w.queue, &w.dest} {
		out, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("dev-%s-%p", id, q))})
		require.NoError(t, err)
		*q = aws.ToString(out.QueueUrl)
	}
	for i := 0; i < 3; i++ {
		_, err := w.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &w.queue, MessageBody: aws.String(fmt.Sprintf("m%d", i))})
		require.NoError(t, err)
	}
	w.pair = drpair.New(t, target, drpair.Options{})

	// An incremental export in AWS's layout, for export apply.
	w.incPrefix = "exports/" + w.table + "/incremental"
	root := t.TempDir()
	w.incSpec = exporttest.Spec{Prefix: w.incPrefix, ExportID: "01772323200000-cccc0003", Incremental: true, FileItems: []int{3}, Table: w.table,
		Bucket: w.bucket, EndTime: time.Now().Add(time.Hour)}
	_, err = exporttest.Write(root, w.incSpec)
	require.NoError(t, err)
	require.NoError(t, exporttest.Upload(ctx, w.s3, w.bucket, root))

	w.migrated = "dev-" + id + "-migrated"
	fixture.Create(t, w.db, fixture.Table{Name: w.migrated, HashKey: "user_id"})
	routes := []byte(fmt.Sprintf("version: 1\nsource_key: [user_id]\nroutes:\n  - table: %s\n    match: { user_id: \"*\" }\n", w.migrated))
	dir := t.TempDir()
	w.routes, w.state = filepath.Join(dir, "routes.yaml"), filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(w.routes, routes, 0o600))
	require.NoError(t, migrate.NewState(w.state, w.table, migrate.RoutesSum(routes)).Save())
	return w
}

// snapshot is what the commands could change, read back from the target.
func (w *world) snapshot(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var parts []string
	parts = append(parts, fmt.Sprint("tables:", fixture.TableNames(t, w.db)))
	drTables, err := w.dr.ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	parts = append(parts, fmt.Sprint("dr tables:", drTables.TableNames))
	exports, err := w.db.ListExports(ctx, &dynamodb.ListExportsInput{TableArn: aws.String(tableARN(t, w.db, w.table))})
	require.NoError(t, err)
	parts = append(parts, fmt.Sprint("exports:", len(exports.ExportSummaries)))
	for _, tb := range []string{w.table, w.corrupt, w.migrated} {
		parts = append(parts, tb+": "+items(t, w.db, tb))
	}
	// The migration's fence (the source's resource policy) and its pointer.
	pol, err := w.db.GetResourcePolicy(ctx, &dynamodb.GetResourcePolicyInput{ResourceArn: aws.String(tableARN(t, w.db, w.table))})
	if err == nil {
		parts = append(parts, "policy: "+aws.ToString(pol.Policy))
	} else {
		parts = append(parts, "policy: none")
	}
	params, err := ssm.NewFromConfig(target.AWSConfig(t)).GetParametersByPath(ctx, &ssm.GetParametersByPathInput{Path: aws.String("/dynops/migrate/" + w.table), Recursive: aws.Bool(true)})
	require.NoError(t, err)
	for _, p := range params.Parameters {
		parts = append(parts, aws.ToString(p.Name)+"="+aws.ToString(p.Value))
	}
	objs, err := w.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &w.bucket})
	require.NoError(t, err)
	parts = append(parts, fmt.Sprint("objects:", len(objs.Contents)))
	for _, q := range []string{w.queue, w.dest} {
		a, err := w.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
		require.NoError(t, err)
		parts = append(parts, fmt.Sprint(a.Attributes))
	}
	parts = append(parts, w.pair.Pointer(t, drpair.Home), w.pair.Pointer(t, drpair.Away), fmt.Sprint(w.pair.Fenced(t, drpair.Home)))
	return strings.Join(parts, "\n")
}

// items is every item of table, in DynamoDB JSON, sorted.
func items(t *testing.T, db *dynamodb.Client, table string) string {
	t.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: &table})
	require.NoError(t, err)
	lines := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		b, err := ddbjson.EncodeItem(it)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	return fmt.Sprint(len(lines), lines)
}

func tableARN(t *testing.T, db *dynamodb.Client, table string) string {
	t.Helper()
	d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	require.NoError(t, err)
	return aws.ToString(d.Table.TableArn)
}

// TestUnauditedDestructiveCommandsChangeNothing: every command that
// changes something, with --yes, refuses to start (exit 1, nothing changed,
// read back) when its `started` record cannot be written, for every unsafe
// shape of the log. The same command with a safe log does run (the last
// case), so the refusal is the audit's.
func TestUnauditedDestructiveCommandsChangeNothing(t *testing.T) {
	w := newWorld(t)
	commands := map[string][]string{
		"pitr restore":       {"pitr", "restore", "--table", w.table, "--latest", "--target", w.restored, "--yes"},
		"pitr repair":        {"pitr", "repair", "--from", w.table, "--to", w.corrupt, "--all-differences", "--allow-unrelated-source", "audit test: a copy, not a restore", "--unscoped", "audit test: every difference is damage", "--yes"},
		"export full":        {"export", "full", "--table", w.table, "--bucket", w.bucket, "--prefix", "exports/new"},
		"export import":      {"export", "import", "--bucket", w.bucket, "--prefix", w.exportPath, "--table", w.table + "-imported", "--hash-key", "user_id:S", "--source-region", target.Region, "--region", "eu-central-1", "--yes", "--unverified-exports", "audit test: the emulator's exports have no manifests"},
		"dlq move":           {"dlq", "move", "--queue", w.queue, "--to-queue", w.dest, "--yes"},
		"dlq redrive":        {"dlq", "redrive", "--queue", w.queue, "--to-queue", w.dest, "--yes"},
		"dr failover":        {"dr", "failover", "--table", w.pair.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated", "--to", drpair.Away, "--yes"},
		"dr failback":        {"dr", "failback", "--table", w.pair.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated", "--to", drpair.Home, "--yes"},
		"dr drill":           {"dr", "drill", "--table", w.pair.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated", "--yes"},
		"runbook run":        {"runbook", "run", "pitr-restore", "--incident", "INC-x", "--param", "table=" + w.table, "--yes"},
		"export apply":       {"export", "apply", "--bucket", w.bucket, "--prefix", w.incPrefix, "--table", w.corrupt, "--since", "2026-03-01T00:00:00Z", "--yes", "--source-table", w.incSpec.TableARN(), "--unverified-exports", "audit test: the emulator keeps no export records"},
		"migrate backfill":   {"migrate", "backfill", "--source", w.table, "--routes", w.routes, "--state", filepath.Join(t.TempDir(), "backfill.json")},
		"migrate catch-up":   {"migrate", "catch-up", "--source", w.table, "--routes", w.routes, "--state", w.state},
		"migrate cutover":    {"migrate", "cutover", "--source", w.table, "--routes", w.routes, "--state", w.state, "--yes"},
		"migrate rollback":   {"migrate", "rollback", "--source", w.table, "--routes", w.routes, "--state", w.state, "--yes"},
		"export incremental": {"export", "incremental", "--table", w.table, "--bucket", w.bucket, "--prefix", "exports/inc", "--since-checkpoint", "--checkpoint-table", w.corrupt},
	}
	// Exports of a --from/--to range read inside the table's PITR window,
	// which on a table made seconds ago is too short for one: these go
	// through a proxy that moves the window's start 2 hours back.
	now := time.Now().UTC()
	commands["export incremental --from --to"] = []string{"export", "incremental", "--table", w.table, "--bucket", w.bucket, "--prefix", "exports/range",
		"--from", now.Add(-time.Hour).Format(time.RFC3339), "--to", now.Add(-30 * time.Minute).Format(time.RFC3339)}
	via := map[string]string{"export incremental --from --to": olderPITRWindow(t, 2*time.Hour)}
	before := w.snapshot(t)
	for cmd, args := range commands {
		for shape, log := range unsafeLogs {
			t.Run(cmd+"/"+shape, func(t *testing.T) {
				_, errOut, code := dynopsVia(t, via[cmd], log(t), args...)
				assert.Equal(t, 1, code)
				assert.Contains(t, errOut, "audit record not written: nothing was changed")
				// A runbook refuses before its first step, not at the
				// first step that refuses on its own.
				assert.NotContains(t, errOut, "== step", "no step ran")
				assert.Equal(t, before, w.snapshot(t), "nothing changed (read back)")
			})
		}
	}
	t.Run("a safe log lets the same restore run", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		_, _, code := target.Dynops(t, log, commands["pitr restore"]...)
		require.Equal(t, 0, code)
		assert.Contains(t, fixture.TableNames(t, w.db), w.restored)
		t.Cleanup(func() {
			_, _ = w.db.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: &w.restored, DeletionProtectionEnabled: aws.Bool(false)})
			_, _ = w.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &w.restored})
		})
	})
}

// TestCentralCopyInCloudWatchLogs: with --audit-log-group, both records of a
// run are also in CloudWatch Logs (one stream per run id), read back; a
// group that does not exist stops a destructive command before it writes.
func TestCentralCopyInCloudWatchLogs(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	logs := cloudwatchlogs.NewFromConfig(cfg)
	db := dynamodb.NewFromConfig(cfg)
	id := harness.UniqueID()
	group := "/dynops/audit/" + id
	_, err := logs.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: &group})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = logs.DeleteLogGroup(context.Background(), &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: &group})
	})
	table := "dev-" + id + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true})
	restored := table + "-restored"
	t.Cleanup(func() {
		_, _ = db.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: &restored, DeletionProtectionEnabled: aws.Bool(false)})
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &restored})
	})

	// A missing group: refused, nothing created.
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	args := []string{"pitr", "restore", "--table", table, "--latest", "--target", restored, "--yes", "--incident", "INC-" + id}
	_, errOut, code := target.Dynops(t, log, append(args, "--audit-log-group", group+"-missing")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "does not exist")
	assert.NotContains(t, fixture.TableNames(t, db), restored)

	_, _, code = target.Dynops(t, log, append(args, "--audit-log-group", group)...)
	require.Equal(t, 0, code)
	rs := audit.Runs(mustRead(t, log))
	run := rs[len(rs)-1]
	require.Equal(t, "ok", run.Result)
	ev, err := logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: &group, LogStreamName: &run.RunID, StartFromHead: aws.Bool(true)})
	require.NoError(t, err)
	require.Len(t, ev.Events, 2, "started and finished")
	var events []string
	for _, e := range ev.Events {
		var rec audit.Record
		require.NoError(t, json.Unmarshal([]byte(aws.ToString(e.Message)), &rec))
		assert.Equal(t, run.RunID, rec.RunID)
		assert.Equal(t, "INC-"+id, rec.Incident)
		assert.NotEmpty(t, rec.Identity.CallerARN)
		events = append(events, rec.Event)
	}
	assert.Equal(t, []string{"started", "finished"}, events)
}

func mustRead(t *testing.T, log string) []audit.Record {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	return recs
}

// dynopsVia runs dynops in-process as target.Dynops does, against endpoint
// instead of the target's own when it is set.
func dynopsVia(t *testing.T, endpoint, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if endpoint == "" {
		return target.Dynops(t, auditLog, args...)
	}
	return target.DynopsVia(t, endpoint, auditLog, args...)
}

// olderPITRWindow starts a proxy in front of the emulator whose
// DescribeContinuousBackups answers say PITR has been on for back: the
// emulator's window starts when the table was made.
func olderPITRWindow(t *testing.T, back time.Duration) string {
	t.Helper()
	u, err := url.Parse(target.Endpoint())
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		if !strings.HasSuffix(r.Request.Header.Get("X-Amz-Target"), ".DescribeContinuousBackups") || r.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		var doc struct {
			D map[string]json.RawMessage `json:"ContinuousBackupsDescription"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return err
		}
		var pitr map[string]any
		if err := json.Unmarshal(doc.D["PointInTimeRecoveryDescription"], &pitr); err != nil {
			return err
		}
		pitr["EarliestRestorableDateTime"] = float64(time.Now().Add(-back).Unix())
		if doc.D["PointInTimeRecoveryDescription"], err = json.Marshal(pitr); err != nil {
			return err
		}
		if body, err = json.Marshal(doc); err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", fmt.Sprint(len(body)))
		r.Header.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAuditVerifyNamesTheFirstBrokenLine (issue 44): the records the
// binary writes chain (`dynops audit verify` exit 0); a line edited in the
// file breaks the chain at the next line, which verify names (exit 1, -o
// json too), and verify itself adds no record.
func TestAuditVerifyNamesTheFirstBrokenLine(t *testing.T) {
	t.Parallel()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	for i := 0; i < 2; i++ {
		_, errOut, code := target.Dynops(t, log, "pitr", "status", "--table", table)
		require.Equal(t, 0, code, errOut)
	}
	out, errOut, code := target.Dynops(t, log, "audit", "verify")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "the chain holds (4 records chained, 0 written before the chain)")

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.Len(t, lines, 5, "four records and the empty tail")
	lines[1] = strings.Replace(lines[1], `"command":"dynops pitr status"`, `"command":"dynops pitr status "`, 1)
	require.NoError(t, os.WriteFile(log, []byte(strings.Join(lines, "")), 0o600))
	out, _, code = target.Dynops(t, log, "audit", "verify")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "the chain breaks at line 3: line 3's prev is sha256:")
	assert.Contains(t, out, "line 2 was edited")
	out, _, code = target.Dynops(t, log, "audit", "verify", "-o", "json")
	assert.Equal(t, 1, code)
	var rep audit.ChainReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, 3, rep.Broken)
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(lines, ""), string(after), "verify writes no record")
}
