package runbook

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer/handler"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/esm"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

// runRunbook runs a runbook non-interactively to the end, as on prod
// without a terminal (--yes, the protected names in one comma-separated
// --confirm), and checks that its timeline lists each of its steps once,
// all ok (or, written "step=result", with the result a step with
// allow-exit reports).
func runRunbook(t *testing.T, log, name string, confirm []string, params map[string]string, steps ...string) string {
	t.Helper()
	return runRunbookAs(t, nil, log, name, confirm, params, steps...)
}

// runRunbookAs is runRunbook as key's principal (the binary, its own
// process; nil: in-process, the emulator's default credentials).
func runRunbookAs(t *testing.T, key *accessKey, log, name string, confirm []string, params map[string]string, steps ...string) string {
	t.Helper()
	incident := "INC-" + harness.UniqueID()
	args := []string{"runbook", "run", name, "--incident", incident, "--yes", "--confirm", strings.Join(confirm, ",")}
	for k, v := range params {
		args = append(args, "--param", k+"="+v)
	}
	var errOut string
	var code int
	if key == nil {
		_, errOut, code = target.Dynops(t, log, args...)
	} else {
		_, errOut, code = runAs(t, key, log, args...)
	}
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "Runbook "+name+" complete")
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, len(steps), md)
	for i, s := range steps {
		id, result, ok := strings.Cut(s, "=")
		if !ok {
			result = "ok"
		}
		assert.Equal(t, "- "+name+" / "+id+": "+result, lines[i])
	}
	return incident
}

func TestRunbookDRFailover_DDB_DR_01(t *testing.T) {
	p := drpair.New(t, target, drpair.Options{Prod: true})
	p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	runRunbook(t, log, "dr-failover", []string{p.Table}, map[string]string{"table": p.Table, "to": drpair.Away,
		"dr_flags": "--regions " + drpair.Home + "," + drpair.Away + " --allow-unreplicated"}, "status", "failover", "verify=findings") // dr status exits 1 after a failover: not ready to fail over again
	assert.Equal(t, drpair.Away, p.Pointer(t, drpair.Home), "the pointer moved (read back)")
	assert.True(t, p.Fenced(t, drpair.Home), "the old region is fenced (read back)")
}

// exportFixture is a prod-* table tagged env=prod (protected) with PITR
// and items, and an export bucket.
func exportFixture(t *testing.T, items int) (table, bucket string, db *dynamodb.Client) {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	table, bucket = "prod-"+id+"-user", "prod-"+id+"-exports"
	db = dynamodb.NewFromConfig(cfg)
	_, err := awsclients.New(cfg).S3().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true, Tags: map[string]string{"env": "prod"}})
	fixture.Put(t, db, table, fixture.Users(items))
	return table, bucket, db
}

const drRegion = "eu-central-1"

// emulatorTrust is the runbooks' trust param for the emulator's exports:
// written without manifests, no export DynamoDB could vouch for.
const emulatorTrust = `--unverified-exports "runbook test: the emulator's exports have no manifests"`

// exportTrust is who runs the export runbooks and their trust param. On
// the emulator the exports have no manifests (DynamoDB cannot vouch for
// them): --unverified-exports, taken on a protected table only by the
// break-glass role, whose session moto's STS hands out for any role (its
// GetCallerIdentity then names the assumed role, which dynops checks). On
// AWS DynamoDB vouches for its exports: the default principal, no param.
func exportTrust(t *testing.T) (*accessKey, string) {
	t.Helper()
	if !target.OnEmulator() {
		return nil, ""
	}
	out, err := sts.NewFromConfig(target.AWSConfig(t)).AssumeRole(context.Background(), &sts.AssumeRoleInput{
		RoleArn:         aws.String("arn:aws:iam::" + target.AccountID(t) + ":role/" + protect.BreakGlassRole),
		RoleSessionName: aws.String("runbook-test")})
	require.NoError(t, err)
	c := out.Credentials
	return &accessKey{ID: aws.ToString(c.AccessKeyId), Secret: aws.ToString(c.SecretAccessKey), Token: aws.ToString(c.SessionToken), ARN: aws.ToString(out.AssumedRoleUser.Arn)}, emulatorTrust
}

// assertVouchedAudited: the export read was audited with who vouched.
func assertVouchedAudited(t *testing.T, log string) {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	for _, r := range recs {
		for _, a := range r.Actions {
			if a.What == audit.ActExportVouched {
				return
			}
		}
	}
	t.Errorf("no %s action in %s", audit.ActExportVouched, log)
}

func drDB(t *testing.T) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsclients.ForRegion(target.AWSConfig(t), drRegion))
}

func count(t *testing.T, db *dynamodb.Client, table string) int {
	t.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: &table, Select: types.SelectCount})
	require.NoError(t, err)
	return int(out.Count)
}

func TestRunbookExportAndCrossRegionRestore_DDB_DR_01(t *testing.T) {
	table, bucket, db := exportFixture(t, 30)
	dr := drDB(t)
	t.Cleanup(func() { dropTable(dr, table) })
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	// moto writes no manifests (verify --data-only; DynamoDB cannot vouch
	// for the data: --unverified-exports, which the import into the
	// protected table takes only as the break-glass role) and the DR table
	// has no alarms (DDB-MON-01 comes from Terraform): accepted, as on the demo.
	who, trust := exportTrust(t)
	runRunbookAs(t, who, log, "export-and-cross-region-restore", []string{table}, map[string]string{"table": table, "bucket": bucket,
		"prefix": "exports/" + table, "source_region": target.Region, "dr_region": drRegion, "schema": "--schema-from " + table,
		"verify_flags": "--data-only", "trust": trust, "accepted_failing_errors": "99"}, "export", "verify", "import", "check=findings")
	assertVouchedAudited(t, log)
	assertOnlyAlarmsMissing(t, log)
	assert.Equal(t, count(t, db, table), count(t, dr, table), "the DR table holds every item (read back)")
}

func TestRunbookDRRestoreInRegion_DDB_DR_01(t *testing.T) {
	table, bucket, db := exportFixture(t, 25)
	dr := drDB(t)
	t.Cleanup(func() { dropTable(dr, table) })
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	prefix := "exports/" + table + "/nightly"
	_, _, code := target.Dynops(t, log, "export", "full", "--table", table, "--bucket", bucket, "--prefix", prefix, "--wait")
	require.Equal(t, 0, code)
	who, trust := exportTrust(t)
	runRunbookAs(t, who, log, "dr-restore-in-region", []string{table}, map[string]string{"table": table, "bucket": bucket, "prefix": prefix,
		"source_region": target.Region, "region": drRegion, "schema": "--hash-key user_id:S", "tags": "--tag env=prod --tag product=t",
		"trust": trust, "accepted_failing_errors": "99"}, "import", "check=findings")
	assertVouchedAudited(t, log)
	assertOnlyAlarmsMissing(t, log)
	assert.Equal(t, count(t, db, table), count(t, dr, table), "the restored table holds every item (read back)")
}

// dlqFixture is a prod-named, env=prod-tagged table with a stream, its
// consumer (the example's real handler behind the local Lambda endpoint,
// a prod-named function) and a prod-named DLQ holding three failed batches
// of four records: the dlq-redrive runbook's targets.
func dlqFixture(t *testing.T) (db *dynamodb.Client, dlq, fn, processed string) {
	t.Helper()
	db, dlq, fn, processed, _ = dlqFixtureWrapped(t, nil)
	return db, dlq, fn, processed
}

// dlqFixtureWrapped is dlqFixture with the consumer wrapped (nil: as is),
// and the source table's name.
func dlqFixtureWrapped(t *testing.T, wrap func(lambda.Handler) lambda.Handler) (db *dynamodb.Client, dlq, fn, processed, table string) {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	var streams *dynamodbstreams.Client
	var sq *sqs.Client
	db, streams, sq = dynamodb.NewFromConfig(cfg), dynamodbstreams.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	id := harness.UniqueID()
	prod := map[string]string{"env": "prod"}
	table = "prod-" + id + "-order"
	processed = "prod-" + id + "-processed"
	streamArn := fixture.Create(t, db, fixture.Table{Name: table, HashKey: "order_id", Stream: true, Tags: prod})
	fixture.Create(t, db, fixture.Table{Name: processed, HashKey: "event_id", Tags: prod})
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("prod-" + id + "-order-dlq"), Tags: prod})
	require.NoError(t, err)
	dlq = aws.ToString(q.QueueUrl)
	t.Cleanup(func() { _, _ = sq.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &dlq}) })
	shard, err := esm.StreamShard(ctx, streams, streamArn)
	require.NoError(t, err)
	ep, err := lambdaendpoint.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ep.Close() })
	consumer := &handler.Handler{DB: db, ProcessedTable: processed}
	fn = table + "-consumer" // prod-…: protected, like the queue: both need --confirm
	ep.Register(fn, func() lambda.Handler {
		h := lambda.NewHandler(consumer.Handle)
		if wrap != nil {
			return wrap(h)
		}
		return h
	})
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", ep.URL) // the in-process steps invoke the local endpoint

	for i := 0; i < 4; i++ {
		fixture.Put(t, db, table, []map[string]types.AttributeValue{{
			"order_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("o%d", i)}, "total": &types.AttributeValueMemberN{Value: "10"}}})
	}
	recs, err := esm.ReadAll(ctx, streams, shard)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	for _, batch := range [][]int{{0, 2}, {2, 3}, {3, 4}} { // three failed batches in the DLQ
		r := esm.OnFailure(shard, recs[batch[0]:batch[1]], esm.FunctionArn(target.Region, fn), "", 3, time.Now())
		require.NoError(t, esm.Send(ctx, sq, dlq, r))
	}
	return db, dlq, fn, processed, table
}

func TestRunbookDLQRedrive_DDB_STREAM_05(t *testing.T) {
	db, dlq, fn, processed := dlqFixture(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	name := dlq[strings.LastIndex(dlq, "/")+1:]
	params := map[string]string{"queue": dlq, "function": fn}

	// A --confirm that names no target of the runbook is refused before
	// any step: exit 2, the value and the targets named, nothing replayed.
	for _, bad := range [][]string{{"--confirm", name + "," + fn + "x"}, {"--confirm", dlq}} {
		args := append([]string{"runbook", "run", "dlq-redrive", "--incident", "INC-" + harness.UniqueID(), "--yes",
			"--param", "queue=" + dlq, "--param", "function=" + fn}, bad...)
		_, errOut, code := target.Dynops(t, log, args...)
		require.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, fmt.Sprintf("names no target of runbook dlq-redrive; its steps change %q, %q", name, fn))
		assert.Equal(t, 0, count(t, db, processed), "nothing was replayed")
	}
	// Only the queue confirmed: the sample step refuses the protected
	// function (the step's own rule), nothing replayed.
	_, errOut, code := target.Dynops(t, log, "runbook", "run", "dlq-redrive", "--incident", "INC-"+harness.UniqueID(), "--yes",
		"--param", "queue="+dlq, "--param", "function="+fn, "--confirm", name)
	require.NotEqual(t, 0, code, errOut)
	assert.Contains(t, errOut, fn)
	assert.Equal(t, 0, count(t, db, processed), "nothing was replayed without the function confirmed")

	runRunbook(t, log, "dlq-redrive", []string{name, fn}, params, "inspect", "sample", "redrive", "verify")
	assert.Equal(t, 4, count(t, db, processed), "the consumer processed every record (read back)")
}

// assertOnlyAlarmsMissing: the check step's findings are in its audit record
// as data, and the only failing rules are what a restore or an import does
// not carry over and Terraform re-applies: the alarms (DDB-MON-01) and, for
// an on-demand table of a protected env, its cost ceiling (DDB-CAP-04; moto
// stores no OnDemandThroughput either).
func assertOnlyAlarmsMissing(t *testing.T, log string) {
	t.Helper()
	for _, r := range runs(t, log) {
		if r.Step != "check" {
			continue
		}
		require.NotEmpty(t, r.Findings)
		for _, f := range r.Findings {
			assert.True(t, strings.HasPrefix(f, "DDB-MON-01 ") || strings.HasPrefix(f, "DDB-CAP-04 "), f)
		}
		assert.Equal(t, int64(len(r.Findings)), r.Counts["failing_errors"])
		return
	}
	t.Fatal("no check step in the audit log")
}

// TestRunbookReadinessAlarm_DDB_PITR_01: the readiness-alarm runbook (read
// only) runs to the end without a terminal on a prod table: the env's check
// (findings allowed: the emulator's tables have no alarms) and the restore
// test table's PITR status.
func TestRunbookReadinessAlarm_DDB_PITR_01(t *testing.T) {
	_, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	_, errOut, code := target.Dynops(t, log, "runbook", "run", "readiness-alarm", "--incident", "INC-"+harness.UniqueID(), "--yes",
		"--param", "env=prod", "--param", "table="+table)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "Runbook readiness-alarm complete")
	assert.Contains(t, errOut, "check .[0].status == ENABLED: ok", "the restore test table's PITR is on (read back)")
}
