package batch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// The inputs of the real-AWS run that a test cannot make cheaply: the
// network the Fargate tasks run in, the dynops image they run (built from
// the commit under test and pushed to ECR), and a bucket for the fixture,
// the exports and the run's prefix.
const (
	envSubnets        = "DYNOPS_TEST_BATCH_SUBNETS"         // subnet-a,subnet-b
	envSecurityGroups = "DYNOPS_TEST_BATCH_SECURITY_GROUPS" // sg-a
	envImage          = "DYNOPS_TEST_DYNOPS_IMAGE"          // ACCOUNT.dkr.ecr.REGION.amazonaws.com/dynops:SHA
	envBucket         = "DYNOPS_TEST_BATCH_BUCKET"          // a bucket in the test's region
)

// largeItems: 10⁷ items, in 200 export data files of 50,000.
const (
	largeFiles    = 200
	itemsPerFile  = 50_000
	changedItems  = 50
	deletedItems  = 50
	batchShards   = 16
	diffCeiling   = 2 * time.Hour
	importCeiling = 3 * time.Hour
)

// TestLargeTableDiffOnBatchFargate: 10⁷ items diffed on AWS Batch (Fargate)
// equal the single-process diff of the same exports, count for count and
// key for key. The table is imported from an export written in AWS's
// layout (exporttest: no write capacity), exported before and after 100
// known changes; both exports are diffed in this process and as 16 shards
// on the queue of modules/dynops-batch (applied here, destroyed after).
func TestLargeTableDiffOnBatchFargate(t *testing.T) {
	target.RequireAWS(t, "runs no container (without Docker every Batch job fails at once), cannot create a Fargate compute environment (it asks for a service role and looks subnets and security groups up in its own EC2), and 10⁷ items are beyond a test's emulator")
	in := map[string]string{}
	var missing []string
	for _, name := range []string{envSubnets, envSecurityGroups, envImage, envBucket} {
		if in[name] = os.Getenv(name); in[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Skipf("set %s (the Fargate network, the dynops image of this commit in ECR, a bucket in %s): the Batch diff needs them", strings.Join(missing, ", "), target.Region)
	}
	ctx := t.Context() // hours: the import, two exports and two diffs of 10⁷ items
	clients := awsclients.New(target.AWSConfig(t))
	db, s3c := clients.DynamoDB(), clients.S3()
	bucket, product := in[envBucket], harness.UniqueID()
	table := "dev-" + product + "-user"
	prefix := "dynops-test/" + product
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	dynops := func(timeout time.Duration, args ...string) map[string]any {
		t.Helper()
		out, errOut, code := target.Dynops(t, log, append(args, "-o", "json", "--wait-timeout", timeout.String())...)
		require.Equal(t, 0, code, "dynops %s: %s", strings.Join(args, " "), errOut)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		return doc
	}

	// 1. The table: imported from a generated export (10⁷ items).
	root := t.TempDir()
	files := make([]int, largeFiles)
	for i := range files {
		files[i] = itemsPerFile
	}
	w, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix + "/fixture", ExportID: "01764000000000-" + product[1:] + "00", FileItems: files,
		Table: table, Bucket: bucket, EndTime: time.Now().Add(24 * time.Hour)})
	require.NoError(t, err)
	require.GreaterOrEqual(t, w.Items, int64(10_000_000))
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		key, _ := filepath.Rel(root, p)
		_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(filepath.ToSlash(key)), Body: bytes.NewReader(body)})
		return err
	}))
	fixture.Cleanup(t, db, table)
	dynops(importCeiling, "export", "import", "--bucket", bucket, "--prefix", prefix+"/fixture", "--table", table, "--hash-key", "user_id:S",
		"--tag", "env=dev", "--tag", "product="+product, "--tag", "usage=user", "--yes")

	// 2. Exports before and after 100 known changes (PITR: no read capacity).
	exportURI := func(name string) string {
		doc := dynops(importCeiling, "export", "full", "--table", table, "--bucket", bucket, "--prefix", prefix+"/"+name, "--wait")
		arn, _ := doc["export_arn"].(string)
		require.NotEmpty(t, arn, "export full: no export_arn in %v", doc)
		return fmt.Sprintf("s3://%s/%s/%s/AWSDynamoDB/%s", bucket, prefix, name, arn[strings.LastIndex(arn, "/")+1:])
	}
	before := exportURI("before")
	key := func(file, i int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("u-%d-%d", file, i)}}
	}
	for i := 0; i < changedItems; i++ {
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key(i, 7),
			UpdateExpression: aws.String("SET email = :e"), ExpressionAttributeValues: map[string]types.AttributeValue{":e": &types.AttributeValueMemberS{Value: "changed@example.com"}}})
		require.NoError(t, err)
	}
	for i := 0; i < deletedItems; i++ {
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key(i, 11)})
		require.NoError(t, err)
	}
	time.Sleep(2 * time.Minute) // the export's time must be past the changes (PITR's latest restorable time trails by minutes)
	now := exportURI("now")

	// 3. The queue, the worker and the job role of this run.
	region := target.Region
	opts := target.Options(t, module, map[string]any{
		"name":               "dev-" + product + "-batch",
		"subnet_ids":         strings.Split(in[envSubnets], ","),
		"security_group_ids": strings.Split(in[envSecurityGroups], ","),
		"image":              in[envImage],
		"max_vcpus":          batchShards * 2,
		"worker":             map[string]any{"vcpu": 2, "memory_mib": 8192},
		"source_table_arns":  []string{fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", region, target.AccountID(t), table)},
		"export_locations":   []any{map[string]any{"bucket": bucket, "prefix": prefix}},
		"run_location":       map[string]any{"bucket": bucket, "prefix": prefix + "/runs"},
	})
	target.Teardown(t, opts, false)
	terraform.InitAndApply(t, opts)
	queue, definition := terraform.Output(t, opts, "job_queue_arn"), terraform.Output(t, opts, "job_definition_arn")

	// 4. The same diff in this process and as shards on Batch.
	dir := t.TempDir()
	diff := []string{"table", "diff", "--source-export", before, "--target-export", now, "--key", "user_id"}
	single := dynops(diffCeiling, append(diff, "--keys-out", filepath.Join(dir, "single.jsonl"))...)
	sharded := dynops(diffCeiling, append(diff, "--keys-out", filepath.Join(dir, "batch.jsonl"),
		"--engine", "batch", "--shards", fmt.Sprint(batchShards), "--run-prefix", fmt.Sprintf("s3://%s/%s/runs", bucket, prefix),
		"--batch-queue", queue, "--batch-job-definition", definition)...)
	for _, field := range []string{"source_items", "target_items", "same", "only_in_source", "only_in_target", "changed"} {
		assert.Equal(t, single[field], sharded[field], "%s: one process vs %d Batch shards", field, batchShards)
	}
	assert.EqualValues(t, w.Items, single["source_items"])
	assert.EqualValues(t, deletedItems, single["only_in_source"])
	assert.EqualValues(t, changedItems, single["changed"])
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		l := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(l)
		return l
	}
	assert.Equal(t, lines("single.jsonl"), lines("batch.jsonl"), "the differing keys, one process vs Batch")
	t.Logf("10⁷-item diff: one process %.0f s (%.0f items/s), %d Batch shards %.0f s", single["seconds"], single["items_per_second"], batchShards, sharded["seconds"])
}
