package pitr

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// exportFixture is an export in AWS's format (exporttest) uploaded to a
// bucket on the target, with its items read back from the local copy.
type exportFixture struct {
	uri    string
	bucket string
	keys   []string // object keys of the data files
	items  []map[string]types.AttributeValue
}

// unverified accepts the fixtures' exports: the emulator keeps no export
// records, so DescribeExport cannot vouch for them.
var unverified = []string{"--unverified-exports", "emulator: keeps no export records"}

func uploadExport(t *testing.T, s3c *s3.Client, bucket, prefix, id, table string, files []int) exportFixture {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	// The export names the bucket and ends after its upload, as AWS writes
	// one; table is a name, or the ARN of a table that exists.
	spec := exporttest.Spec{Prefix: prefix, ExportID: id, FileItems: files, PadBytes: 40, Table: table, Bucket: bucket, EndTime: time.Now().Add(time.Hour)}
	if strings.HasPrefix(table, "arn:") {
		spec.Table, spec.TableArn = "", table
	}
	w, err := exporttest.Write(root, spec)
	require.NoError(t, err)
	fx := exportFixture{bucket: bucket, keys: w.DataKeys, uri: "s3://" + bucket + "/" + prefix + "/AWSDynamoDB/" + id}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(filepath.ToSlash(rel)), Body: bytes.NewReader(body)})
		return err
	}))
	_, err = exportverify.Export{Store: exportverify.DirStore{Root: root}, Prefix: prefix, URI: root}.EachItem(ctx, 1,
		func(it map[string]types.AttributeValue) error { fx.items = append(fx.items, it); return nil })
	require.NoError(t, err)
	require.Len(t, fx.items, int(w.Items))
	return fx
}

func createBucket(t *testing.T, s3c *s3.Client) string {
	t.Helper()
	bucket := "dev-" + harness.UniqueID() + "-exports"
	in := &s3.CreateBucketInput{Bucket: &bucket}
	if target.Region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(target.Region)}
	}
	_, err := s3c.CreateBucket(context.Background(), in)
	require.NoError(t, err)
	t.Cleanup(func() { emptyAndDelete(s3c, bucket) })
	return bucket
}

func emptyAndDelete(s3c *s3.Client, bucket string) {
	ctx := context.Background()
	out, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
	if err == nil {
		for _, o := range out.Contents {
			_, _ = s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key})
		}
	}
	_, _ = s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
}

func readKeysFile(t *testing.T, path string) map[tablediff.Kind][]string {
	t.Helper()
	got := map[tablediff.Kind][]string{}
	_, err := tablediff.ReadKeys(path, func(r tablediff.KeyRecord) error {
		got[r.Kind] = append(got[r.Kind], string(r.Key))
		return nil
	})
	require.NoError(t, err)
	return got
}

func userKey(it map[string]types.AttributeValue) string {
	b, _ := tablediff.EncodeKey(it, []string{"user_id"})
	return string(b)
}

// TestDiffAndRepairFromExport: an export (AWS's layout, in the target's S3)
// stands for the table at the restore point; the live table then lost,
// changed and gained items. `table diff --source-export` finds exactly
// those keys, and `pitr repair --from-export` puts the export's images back
// without a restored table; a second diff finds only the gained items.
func TestDiffAndRepairFromExport(t *testing.T) {
	cfg := target.AWSConfig(t)
	db, s3c := dynamodb.NewFromConfig(cfg), awsclients.New(cfg).S3()
	bucket := createBucket(t, s3c)
	table := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id"})
	d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	require.NoError(t, err)
	fx := uploadExport(t, s3c, bucket, "full/dev-user", "01763700000000-a1b2c3d4", aws.ToString(d.Table.TableArn), []int{120, 0, 90, 150})
	fixture.Put(t, db, table, fx.items)
	// Since the export: 25 deleted, 15 changed (a value, a type, a set, a
	// removed attribute), 10 new.
	var lost, changed, gained []string
	var dels []map[string]types.AttributeValue
	for _, it := range fx.items[:25] {
		dels = append(dels, map[string]types.AttributeValue{"user_id": it["user_id"]})
		lost = append(lost, userKey(it))
	}
	fixture.Delete(t, db, table, dels)
	var mods []map[string]types.AttributeValue
	for i, it := range fx.items[100:115] {
		m := map[string]types.AttributeValue{}
		for k, v := range it {
			m[k] = v
		}
		switch i % 4 {
		case 0:
			m["email"] = &types.AttributeValueMemberS{Value: "changed@example.com"}
		case 1:
			m["logins"] = &types.AttributeValueMemberS{Value: "12"} // N -> S
		case 2:
			m["tags"] = &types.AttributeValueMemberSS{Value: []string{"a"}}
		case 3:
			delete(m, "active")
		}
		mods = append(mods, m)
		changed = append(changed, userKey(it))
	}
	for i := 0; i < 10; i++ {
		it := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "new-" + string(rune('a'+i))}}
		mods = append(mods, it)
		gained = append(gained, userKey(it))
	}
	fixture.Put(t, db, table, mods)

	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	keys := filepath.Join(dir, "keys.jsonl")
	// The emulator keeps no export records: DescribeExport cannot vouch for
	// the export, so the diff refuses to read it without a reason.
	out, errOut, code := target.Dynops(t, log, "table", "diff", "--source-export", fx.uri, "--target", table, "--keys-out", keys)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "DescribeExport cannot vouch for it")
	assert.Contains(t, errOut, "--unverified-exports")
	assert.NoFileExists(t, keys, "nothing read, no keys file")
	out, errOut, code = target.Dynops(t, log, append([]string{"table", "diff", "--source-export", fx.uri, "--target", table, "--keys-out", keys, "-o", "json"}, unverified...)...)
	require.Equal(t, 0, code, errOut)
	var rep tablediff.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, fx.uri, rep.Source)
	assert.Equal(t, int64(len(fx.items)), rep.SourceItems)
	assert.Equal(t, int64(len(fx.items)-25+10), rep.TargetItems)
	assert.Equal(t, int64(len(fx.items)-25-15), rep.Same)
	got := readKeysFile(t, keys)
	assert.ElementsMatch(t, lost, got[tablediff.OnlyInSource])
	assert.ElementsMatch(t, changed, got[tablediff.Changed])
	assert.ElementsMatch(t, gained, got[tablediff.OnlyInTarget])

	t.Run("an export of a same-named table of another account is refused, nothing written", func(t *testing.T) {
		foreignArn := strings.Replace(aws.ToString(d.Table.TableArn), ":123456789012:", ":999988887777:", 1)
		require.NotEqual(t, foreignArn, aws.ToString(d.Table.TableArn))
		foreign := uploadExport(t, s3c, bucket, "copied/dev-user", "01763700000000-f0f0f0f0", foreignArn, []int{5})
		before := itemsOf(t, db, table)
		out, errOut, code := target.Dynops(t, log, "pitr", "repair", "--from-export", foreign.uri, "--to", table, "--keys", keys, "--unscoped", "test: every difference is damage", "--yes",
			"--unverified-exports", "emulator: keeps no export records")
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "its manifest says table "+foreignArn+", not "+aws.ToString(d.Table.TableArn))
		assert.Equal(t, before, itemsOf(t, db, table), "nothing written (read back)")
	})
	for _, mode := range [][]string{{"--unconditional"}, nil} {
		// Both write modes copy the export's images back; the second run finds them equal.
		// The emulator keeps no export records: DescribeExport cannot vouch.
		args := append([]string{"pitr", "repair", "--from-export", fx.uri, "--to", table, "--keys", keys, "--unscoped", "test: every difference is damage", "--yes", "-o", "json",
			"--unverified-exports", "emulator: keeps no export records"}, mode...)
		out, errOut, code = target.Dynops(t, log, args...)
		require.Equal(t, 0, code, errOut)
		var r struct {
			Result repair.Result `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		if mode != nil {
			assert.Equal(t, int64(40), r.Result.Copied, "25 lost + 15 changed, read back from the export")
		} else {
			assert.Equal(t, int64(0), r.Result.Copied)
			assert.Equal(t, int64(40), r.Result.AlreadyEqual, "already repaired by the first run")
		}
		assert.Equal(t, int64(10), r.Result.KeptExtra, "items written since are kept without --delete-extra")
	}
	recs, err := audit.Read(log)
	require.NoError(t, err)
	var vouched map[string]any
	for _, r := range recs {
		for _, a := range r.Actions {
			if a.What == audit.ActExportVouched {
				vouched, _ = a.Detail.(map[string]any)
			}
		}
	}
	require.NotNil(t, vouched, "the export read is audited")
	assert.Equal(t, aws.ToString(d.Table.TableArn), vouched["source_table"])
	assert.Contains(t, vouched["export_arn"], "/export/01763700000000-a1b2c3d4")
	assert.Equal(t, "emulator: keeps no export records", vouched["unverified_exports"])
	for _, it := range append(fx.items[:25:25], fx.items[100:115]...) {
		assert.Equal(t, it, fixture.Get(t, db, table, map[string]types.AttributeValue{"user_id": it["user_id"]}), "the export's image, read back")
	}

	keys2 := filepath.Join(dir, "keys2.jsonl")
	_, errOut, code = target.Dynops(t, log, append([]string{"table", "diff", "--source-export", fx.uri, "--target", table, "--keys-out", keys2}, unverified...)...)
	require.Equal(t, 0, code, errOut)
	got = readKeysFile(t, keys2)
	assert.Empty(t, got[tablediff.OnlyInSource])
	assert.Empty(t, got[tablediff.Changed])
	assert.ElementsMatch(t, gained, got[tablediff.OnlyInTarget])
}

// TestDiffTwoExports compares two exports (no table read at all) with the
// key given, and refuses a damaged export by file name before any result.
func TestDiffTwoExports(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	s3c := awsclients.New(cfg).S3()
	bucket := createBucket(t, s3c)
	a := uploadExport(t, s3c, bucket, "full/dev-user", "01763700000000-aaaaaaaa", "", []int{60, 60})
	b := uploadExport(t, s3c, bucket, "full/dev-user", "01763790000000-bbbbbbbb", "", []int{60, 61})
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")

	_, errOut, code := target.Dynops(t, log, append([]string{"table", "diff", "--source-export", a.uri, "--target-export", b.uri}, unverified...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--key")

	out, errOut, code := target.Dynops(t, log, append([]string{"table", "diff", "--source-export", a.uri, "--target-export", b.uri, "--key", "user_id", "-o", "json"}, unverified...)...)
	require.Equal(t, 0, code, errOut)
	var rep tablediff.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, int64(120), rep.Same, "the same generator wrote both: equal items")
	assert.Equal(t, int64(1), rep.OnlyInTarget)

	// The whole bucket holds two exports: the tool asks which.
	_, errOut, code = target.Dynops(t, log, append([]string{"table", "diff", "--source-export", "s3://" + bucket + "/full", "--target-export", b.uri, "--key", "user_id"}, unverified...)...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "2 exports under")

	// One byte changed in a data file: the diff stops and names the file.
	obj, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &b.keys[1]})
	require.NoError(t, err)
	var body bytes.Buffer
	_, err = body.ReadFrom(obj.Body)
	require.NoError(t, err)
	raw := body.Bytes()
	raw[len(raw)/2] ^= 0xff
	_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &b.keys[1], Body: bytes.NewReader(raw)})
	require.NoError(t, err)
	keys := filepath.Join(dir, "keys.jsonl")
	_, errOut, code = target.Dynops(t, log, append([]string{"table", "diff", "--source-export", a.uri, "--target-export", b.uri, "--key", "user_id", "--keys-out", keys}, unverified...)...)
	assert.Equal(t, 1, code)
	assert.True(t, strings.Contains(errOut, b.keys[1]), "the damaged file is named: %s", errOut)
	_, err = os.Stat(keys)
	assert.True(t, os.IsNotExist(err), "no keys file from a damaged export")
}

// itemsOf is every item of the table by checksum (a consistent Scan).
func itemsOf(t *testing.T, db *dynamodb.Client, table string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	in := &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true)}
	for {
		page, err := db.Scan(context.Background(), in)
		require.NoError(t, err)
		for _, it := range page.Items {
			out[tablediff.Checksum(it, nil)] = true
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// TestRepairFromKeysOfTwoExports_DDB_PITR_02: `pitr repair --from-export`
// takes keys diffed export against export (`table diff --source-export
// --target-export`, the large-table runbook) when the target export is of
// --to and vouched for like the source; a target export of another table
// (the same name in another account) is refused, nothing written.
func TestRepairFromKeysOfTwoExports_DDB_PITR_02(t *testing.T) {
	cfg := target.AWSConfig(t)
	db, s3c := dynamodb.NewFromConfig(cfg), awsclients.New(cfg).S3()
	bucket := createBucket(t, s3c)
	table := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id"})
	d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	require.NoError(t, err)
	arn := aws.ToString(d.Table.TableArn)
	before := uploadExport(t, s3c, bucket, "full/before", "01763700000000-a1a1a1a1", arn, []int{21})
	now := uploadExport(t, s3c, bucket, "full/now", "01763790000000-b2b2b2b2", arn, []int{20})
	foreignArn := strings.Replace(arn, ":123456789012:", ":999988887777:", 1)
	require.NotEqual(t, foreignArn, arn)
	foreign := uploadExport(t, s3c, bucket, "copied/now", "01763790000000-c3c3c3c3", foreignArn, []int{20})
	fixture.Put(t, db, table, now.items) // the table as the export of now: one item lost since before
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	repairWith := func(t *testing.T, targetExport string) (string, string, int) {
		keys := filepath.Join(t.TempDir(), "keys.jsonl")
		_, errOut, code := target.Dynops(t, log, append([]string{"table", "diff", "--source-export", before.uri, "--target-export", targetExport, "--key", "user_id", "--keys-out", keys}, unverified...)...)
		require.Equal(t, 0, code, errOut)
		return target.Dynops(t, log, append([]string{"pitr", "repair", "--from-export", before.uri, "--to", table, "--keys", keys,
			"--unscoped", "test: every difference is damage", "--yes", "-o", "json"}, unverified...)...)
	}

	t.Run("the target export of another table is refused, nothing written", func(t *testing.T) {
		was := itemsOf(t, db, table)
		out, errOut, code := repairWith(t, foreign.uri)
		assert.Equal(t, 2, code, errOut)
		assert.NotContains(t, out, `"result"`, "refused before any plan or write")
		assert.Contains(t, errOut, "its manifest says table "+foreignArn+", not "+arn)
		assert.Equal(t, was, itemsOf(t, db, table), "nothing written (read back)")
	})
	out, errOut, code := repairWith(t, now.uri)
	require.Equal(t, 0, code, errOut)
	var r struct {
		Result repair.Result `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, int64(1), r.Result.Copied, "the item lost since the export before is put back")
	lost := before.items[20]
	assert.Equal(t, lost, fixture.Get(t, db, table, map[string]types.AttributeValue{"user_id": lost["user_id"]}), "the export's image, read back")
}
