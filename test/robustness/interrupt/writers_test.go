package interrupt

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// TestCtrlCOfEveryWritingCommand interrupts each command that changes
// something (TestEveryCommandDeclaresItsFacts in internal/cmd/root lists them)
// while a request of the named kind is held: the one line must name what is
// left and how to continue or undo it. Where the emulator cannot carry the
// command to its writing step (no global tables, no message move tasks, no
// export manifests), the hold is on the first read of the target, named so.
func TestCtrlCOfEveryWritingCommand(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the holding proxy sits in front of the emulator")
	}
	bin := harness.DynopsBinary(t)
	cfg := target.AWSConfig(t)
	db := dynamodb.NewFromConfig(cfg)
	ctx := context.Background()
	id := harness.UniqueID()
	tbl := "dev-" + id + "-user"
	fixture.Create(t, db, fixture.Table{Name: tbl, HashKey: "user_id", PITR: true})
	fixture.Put(t, db, tbl, fixture.Users(5))
	fixture.Create(t, db, fixture.Table{Name: tbl + "-copy", HashKey: "user_id"})
	bucket := "dev-" + id + "-exports"
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	_, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(target.Region)}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dev-" + id + "-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	q2, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dev-" + id + "-main")})
	if err != nil {
		t.Fatal(err)
	}
	dlq, mainQ := aws.ToString(q.QueueUrl), aws.ToString(q2.QueueUrl)
	// A full export to import from (the emulator writes its data/ folder only).
	if out, errOut, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "export", "full", "--table", tbl, "--bucket", bucket, "--prefix", "imp", "--wait"); code != 0 {
		t.Fatalf("export full: exit %d\n%s%s", code, out, errOut)
	}
	objs, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("imp/")})
	if err != nil || len(objs.Contents) == 0 {
		t.Fatalf("the export wrote nothing: %v", err)
	}
	exported, _, _ := strings.Cut(aws.ToString(objs.Contents[0].Key), "/data/")

	cases := []struct {
		name  string
		hold  string
		args  []string
		wants []string
	}{
		{"pitr restore while restoring", "RestoreTableToPointInTime", []string{"pitr", "restore", "--table", tbl, "--latest", "--yes"},
			[]string{"a restore already started goes on in AWS", "delete the new table"}},
		{"pitr repair while scanning", "Scan", []string{"pitr", "repair", "--from", tbl, "--to", tbl + "-copy", "--all-differences", "--allow-unrelated-source", "test", "--unscoped", "test", "--yes"},
			[]string{"items written so far stay written", "run the same repair again"}},
		{"export full while starting the export", "ExportTableToPointInTime", []string{"export", "full", "--table", tbl, "--bucket", bucket, "--prefix", "full"},
			[]string{"an export already started goes on in AWS", "dynops export wait ARN"}},
		{"export incremental while reading the PITR window", "DescribeContinuousBackups", []string{"export", "incremental", "--table", tbl, "--bucket", bucket,
			"--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T06:00:00Z"},
			[]string{"an export already started goes on in AWS", "continues from the checkpoint"}},
		{"export import while starting the import", "ImportTable", []string{"export", "import", "--bucket", bucket, "--prefix", exported,
			"--table", tbl + "-imported", "--schema-from", tbl, "--yes"},
			[]string{"an import already started goes on in AWS", "aws dynamodb list-imports"}},
		{"export apply while reading the table's protection", "ListTagsOfResource", []string{"export", "apply", "--bucket", bucket, "--prefix", "inc", "--table", tbl, "--yes"},
			[]string{"exports applied so far stay applied", "dynops:applied-through", "run the same apply again"}},
		{"export revert while reading the table's protection", "ListTagsOfResource", []string{"export", "revert", "--bucket", bucket, "--prefix", "inc", "--table", tbl, "--yes"},
			[]string{"keys reverted so far stay reverted", "run the same revert again"}},
		{"dlq redrive while receiving", "ReceiveMessage", []string{"dlq", "redrive", "--queue", dlq, "--yes"},
			[]string{"messages replayed so far are deleted from the DLQ", "run the redrive again"}},
		{"dlq move while reading the queue", "GetQueueAttributes", []string{"dlq", "move", "--queue", dlq, "--to-queue", mainQ, "--yes"},
			[]string{"a message move task goes on in SQS", "run the move again"}},
		{"dr failover while reading the table", "DescribeTable", []string{"dr", "failover", "--table", tbl, "--to", "eu-central-1", "--regions", target.Region + ",eu-central-1", "--yes"},
			[]string{"the failover stopped between steps", "dynops dr status", "rollback"}},
		{"dr failback while reading the table", "DescribeTable", []string{"dr", "failback", "--table", tbl, "--to", target.Region, "--regions", target.Region + ",eu-central-1", "--yes"},
			[]string{"the failback stopped between steps", "dynops dr status"}},
		{"dr drill while reading the table", "DescribeTable", []string{"dr", "drill", "--table", tbl, "--regions", target.Region + ",eu-central-1", "--yes"},
			[]string{"the drill stopped between steps", "delete any canary item"}},
		{"runbook run while its first step reads", "DescribeContinuousBackups", []string{"runbook", "run", "pitr-restore", "--incident", "INC-" + id,
			"--param", "table=" + tbl, "--param", "restore_point=--latest", "--yes"},
			[]string{"the step that was running stopped", "same --incident again"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctrlC(t, bin, tc.hold, t.TempDir(), t.TempDir(), tc.args, tc.wants...)
		})
	}
}

// TestCtrlCOfAMigration interrupts each writing step of a migration of the
// example domain: backfill mid-scan, catch-up mid-read, cutover during the
// drain (the source is left FENCED: the line must say so and name
// `dynops migrate rollback`, and the fence must really be there), rollback
// while setting the pointer back.
func TestCtrlCOfAMigration(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the holding proxy sits in front of the emulator")
	}
	bin := harness.DynopsBinary(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := migrationexample.Source
	migrationexample.CreateTable(t, db, src, migrationexample.SourceSpec(), false)
	for usage, spec := range migrationexample.Destinations(t) {
		migrationexample.CreateTable(t, db, "dev-"+migrationexample.Product+"-"+usage, spec, false)
	}
	migrationexample.Populate(t, db, 200)
	work := t.TempDir()
	state := filepath.Join(work, "state.json")
	common := []string{"--source", src, "--routes", migrationexample.RoutesFile(), "--state", state}
	run := func(args ...string) {
		t.Helper()
		out, errOut, code := target.Dynops(t, filepath.Join(work, "audit.jsonl"), append(args, common...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	with := func(args ...string) []string { return append(args, common...) }

	ctrlC(t, bin, "Scan", work, work, with("migrate", "backfill", "--allow-unmatched"),
		"items copied so far stay written", "same --state: it resumes")
	run("migrate", "backfill", "--allow-unmatched")
	ctrlC(t, bin, "GetRecords", work, work, with("migrate", "catch-up"),
		"changes applied so far stay applied", "run catch-up again")
	run("migrate", "catch-up")

	line := ctrlC(t, bin, "GetRecords", work, work, with("migrate", "cutover", "--settle", "0s", "--yes"),
		"cutover stopped at drain", src+" stays fenced", "dynops migrate rollback --source "+src, "source stays FENCED")
	if strings.Contains(line, "nothing is left half-done") {
		t.Errorf("the cutover's line claims nothing is left: %q", line)
	}
	// The line's claim, read back from the service: the fence is on.
	desc, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(src)})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := db.GetResourcePolicy(context.Background(), &dynamodb.GetResourcePolicyInput{ResourceArn: desc.Table.TableArn})
	if err != nil || !failover.HasOwnFence(aws.ToString(pol.Policy), failover.OwnerMigrate) {
		t.Errorf("the source does not carry the migration's fence after the interrupted cutover: %v %s", err, aws.ToString(pol.Policy))
	}

	ctrlC(t, bin, "PutParameter", work, work, with("migrate", "rollback", "--yes"),
		"the rollback stopped between steps", "run the same `dynops migrate rollback` again")
	run("migrate", "rollback", "--yes")
}
