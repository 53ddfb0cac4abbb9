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
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// TestCtrlCOfEveryWritingCommand interrupts each command that changes
// something (read from the command tree: a new writing command without a row
// fails here) while a request of the named kind is held: the one line must
// carry the command's declared state, what is left and how to continue or
// undo it. Where the emulator cannot carry the
// command to its writing step (no global tables, no message move tasks, no
// export manifests), the hold is on the first read of the target, named so.
func TestCtrlCOfEveryWritingCommand(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the holding proxy sits in front of the emulator")
	}
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

	// One row per writing command of the tree (cmdfacts.Writes), keyed by its
	// path; the line a Ctrl-C prints must carry the command's declared
	// interrupt state (cmdfacts.SetInterrupt), read from the tree.
	rows := map[string]struct {
		hold string
		args []string
	}{
		"pitr restore": {"RestoreTableToPointInTime", []string{"--table", tbl, "--latest", "--yes"}},
		"pitr repair":  {"Scan", []string{"--from", tbl, "--to", tbl + "-copy", "--all-differences", "--allow-unrelated-source", "test", "--unscoped", "test", "--yes"}},
		"export full":  {"ExportTableToPointInTime", []string{"--table", tbl, "--bucket", bucket, "--prefix", "full"}},
		// The window's PITR read: the emulator writes no incremental exports.
		"export incremental": {"DescribeContinuousBackups", []string{"--table", tbl, "--bucket", bucket, "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T06:00:00Z"}},
		"export import": {"ImportTable", []string{"--bucket", bucket, "--prefix", exported, "--table", tbl + "-imported", "--schema-from", tbl, "--yes",
			"--unverified-exports", "interrupt test: the emulator's exports have no manifests"}},
		// The table's protection read: the emulator writes no export manifests.
		"export apply":  {"ListTagsOfResource", []string{"--bucket", bucket, "--prefix", "inc", "--table", tbl, "--yes"}},
		"export revert": {"ListTagsOfResource", []string{"--bucket", bucket, "--prefix", "inc", "--table", tbl, "--yes"}},
		"dlq redrive":   {"ReceiveMessage", []string{"--queue", dlq, "--yes"}},
		// The queue's first read: the emulator has no message move tasks.
		"dlq move": {"GetQueueAttributes", []string{"--queue", dlq, "--to-queue", mainQ, "--yes"}},
		// The table's first read: the emulator has no global tables.
		"dr failover": {"DescribeTable", []string{"--table", tbl, "--to", "eu-central-1", "--regions", target.Region + ",eu-central-1", "--yes"}},
		"dr failback": {"DescribeTable", []string{"--table", tbl, "--to", target.Region, "--regions", target.Region + ",eu-central-1", "--yes"}},
		"dr drill":    {"DescribeTable", []string{"--table", tbl, "--regions", target.Region + ",eu-central-1", "--yes"}},
		"runbook run": {"DescribeContinuousBackups", []string{"pitr-restore", "--incident", "INC-" + id, "--param", "table=" + tbl, "--param", "restore_point=--latest", "--yes"}},
		// The read of the shared run state (S3 REST: held by method and path).
		"runbook approve": {"GET /dynops/runbooks/", []string{"--incident", "INC-" + id, "--runbook", "pitr-restore", "--step", "restore", "--plan-sha256", strings.Repeat("0", 64), "--state-bucket", bucket}},
		"runbook reject":  {"GET /dynops/runbooks/", []string{"--incident", "INC-" + id, "--runbook", "pitr-restore", "--step", "restore", "--reason", "test", "--state-bucket", bucket}},
		"item put":        {"PutItem", []string{"--table", tbl, "--item", `{"user_id": "u-ctrl-c", "status": "new"}`, "--yes"}},
		"item update":     {"UpdateItem", []string{"--table", tbl, "--key", `{"user_id": "user_00001"}`, "--set", `{"status": "held"}`, "--yes"}},
		"item delete":     {"DeleteItem", []string{"--table", tbl, "--key", `{"user_id": "user_00002"}`, "--yes"}},
		// The tables' first read (Security Hub's REST calls cannot be held by target).
		"check": {"DescribeTable", []string{"--table", tbl, "--to-security-hub"}},
	}
	states := writingCommands(t)
	for path := range states {
		if _, ok := rows[path]; !ok && !migrationSteps[path] {
			t.Errorf("dynops %s writes (cmdfacts.Writes) but has no Ctrl-C row here or in TestCtrlCOfAMigration", path)
		}
	}
	for path, row := range rows {
		t.Run(path, func(t *testing.T) {
			state, ok := states[path]
			if !ok {
				t.Fatalf("dynops %s is not a writing command of the tree: remove its row", path)
			}
			ctrlC(t, row.hold, t.TempDir(), t.TempDir(), append(strings.Fields(path), row.args...), state)
		})
	}
}

// migrationSteps are the writing commands TestCtrlCOfAMigration interrupts,
// one migration of the example domain carried through them.
var migrationSteps = map[string]bool{"migrate backfill": true, "migrate catch-up": true, "migrate cutover": true, "migrate rollback": true}

// writingCommands is every command of dynops's tree that declares it changes
// something, by path without "dynops ", with its declared interrupt state.
func writingCommands(t *testing.T) map[string]string {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	out := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if changes, _ := cmdfacts.Changes(c); changes {
			out[strings.TrimPrefix(c.CommandPath(), "dynops ")] = cmdfacts.Interrupt(c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root.NewCmdRoot(factory.New(ios), "test"))
	if len(out) < 15 {
		t.Fatalf("found only %d writing commands in the tree: the walk is broken", len(out))
	}
	return out
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

	ctrlC(t, "Scan", work, work, with("migrate", "backfill", "--allow-unmatched"),
		"items copied so far stay written", "same --state: it resumes")
	run("migrate", "backfill", "--allow-unmatched")
	ctrlC(t, "GetRecords", work, work, with("migrate", "catch-up"),
		"changes applied so far stay applied", "run catch-up again")
	run("migrate", "catch-up")

	line := ctrlC(t, "GetRecords", work, work, with("migrate", "cutover", "--settle", "0s", "--yes"),
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

	ctrlC(t, "PutParameter", work, work, with("migrate", "rollback", "--yes"),
		"the rollback stopped between steps", "run the same `dynops migrate rollback` again")
	run("migrate", "rollback", "--yes")
}
