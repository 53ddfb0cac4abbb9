package export

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	fx "github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRevertWritesOnlyWhatDynamoDBVouchesFor (issue 44's High): a user is
// role=user; exports whose old image says role=admin are put under the
// incident prefix by someone who can write there. Each is refused with exit
// 2, nothing on stdout, a message naming the export and what did not match,
// and the table unchanged (read back):
//   - any fixture at all without --unverified-exports: the emulator keeps no
//     export records, so DescribeExport cannot vouch (fail closed);
//   - a forged export: its manifest claims the table, its exportArn is
//     another table's;
//   - a foreign table's export copied under the prefix (another table,
//     bucket and prefix in its manifest);
//   - a data file overwritten after the export's end, with the files
//     manifest and its checksum rewritten to match (only S3's LastModified
//     tells);
//   - --unverified-exports on a protected table (not the break-glass role).
//
// The same export, uploaded untouched, is accepted with the reason, which
// the plan prints; the decision on DynamoDB's own answers is
// TestVouchAsksDynamoDB_FakeBecauseTheEmulatorKeepsNoExportRecords
// (internal/exportverify).
func TestRevertWritesOnlyWhatDynamoDBVouchesFor(t *testing.T) {
	fxt := newFixture(t, 0)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	user := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u-1"}, "role": &types.AttributeValueMemberS{Value: "user"}}
	fx.Put(t, fxt.db, fxt.table, []map[string]types.AttributeValue{user})
	admin := with(user, "role", "admin")
	records := [][]exporttest.Record{{{Keys: exporttest.Image(t, map[string]types.AttributeValue{"user_id": user["user_id"]}), Old: exporttest.Image(t, admin), New: exporttest.Image(t, user), Micros: t0.UnixMicro() + 1}}}
	before := tableState(t, fxt.db, fxt.table)
	other := strings.Replace(fxt.arn, fxt.table, "dev-"+harness.UniqueID()+"-orders", 1)

	refused := func(t *testing.T, prefix string, extra []string, want ...string) {
		t.Helper()
		args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", prefix, "--table", fxt.table, "--yes"}, extra...)
		out, errOut, code := fxt.dynops(t, args...)
		assert.Equal(t, 2, code, "a refusal is exit 2: %s", errOut)
		assert.Empty(t, out, "nothing on stdout claims work")
		for _, w := range want {
			assert.Contains(t, errOut, w)
		}
		assert.Equal(t, before, tableState(t, fxt.db, fxt.table), "the table is unchanged (read back)")
	}
	write := func(t *testing.T, spec exporttest.Spec) {
		t.Helper()
		root := t.TempDir()
		_, err := exporttest.Write(root, spec)
		require.NoError(t, err)
		upload(t, fxt, root)
	}
	good := fxt.spec(exporttest.Spec{Prefix: "incident/INC-9", ExportID: "01772326800000-v0000001", Incremental: true, From: t0, To: t0.Add(time.Hour), Records: records})

	t.Run("without --unverified-exports the emulator's exports are refused", func(t *testing.T) {
		write(t, good)
		refused(t, good.Prefix, nil, "export "+good.ExportArn(), "DescribeExport cannot vouch for it", "--unverified-exports")
	})
	t.Run("a forged export: the manifest claims the table, the exportArn is another table's", func(t *testing.T) {
		root := t.TempDir()
		forged := fxt.spec(exporttest.Spec{Prefix: "incident/INC-10", ExportID: "01772326800000-v0000002", Incremental: true, From: t0, To: t0.Add(time.Hour), Records: records, TableArn: other})
		w, err := exporttest.Write(root, forged)
		require.NoError(t, err)
		rewriteSummary(t, root, w, func(s string) string {
			return strings.Replace(s, `"tableArn":"`+other+`"`, `"tableArn":"`+fxt.arn+`"`, 1)
		})
		upload(t, fxt, root)
		refused(t, forged.Prefix, unverified, "export "+forged.ExportArn(), "is not an export of its tableArn "+fxt.arn)
	})
	t.Run("a foreign table's export copied under the prefix", func(t *testing.T) {
		foreign := fxt.spec(exporttest.Spec{Prefix: "incident/INC-11", ExportID: "01772326800000-v0000003", Incremental: true, From: t0, To: t0.Add(time.Hour), Records: records,
			TableArn: other, Bucket: "another-accounts-exports"})
		write(t, foreign)
		refused(t, foreign.Prefix, unverified, "export "+foreign.ExportArn(), "its manifest says table "+other+", not "+fxt.arn,
			"its manifest says bucket another-accounts-exports, but it was read from "+fxt.bucket)
	})
	t.Run("a data file overwritten after the export's end", func(t *testing.T) {
		spec := good
		spec.Prefix, spec.ExportID = "incident/INC-12", "01772326800000-v0000004"
		spec.Records = [][]exporttest.Record{{{Keys: records[0][0].Keys, Old: exporttest.Image(t, user), New: exporttest.Image(t, with(user, "role", "guest")), Micros: t0.UnixMicro() + 1}}}
		write(t, spec)
		// The export ends now, after its upload: as AWS writes one.
		spec.EndTime = time.Now()
		root := t.TempDir()
		w, err := exporttest.Write(root, spec)
		require.NoError(t, err)
		putKeys(t, fxt, root, w.SummaryKey, strings.TrimSuffix(w.SummaryKey, ".json")+".md5")
		args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", spec.Prefix, "--table", fxt.table}, unverified...)
		out, errOut, code := fxt.dynops(t, args...)
		require.Equal(t, 0, code, "the export as written is accepted with the reason: %s", errOut)
		assert.Contains(t, out, "source table: "+fxt.arn, "the plan names the source table")
		assert.Contains(t, out, "export "+spec.ExportArn()+": UNVERIFIED", "and every export, with who vouched for it")
		assert.Contains(t, out, "emulator: keeps no export records", "and the reason")
		// S3's LastModified has seconds: the overwrite lands in a later one.
		time.Sleep(time.Until(spec.EndTime.Truncate(time.Second).Add(2 * time.Second)))
		forged := spec
		forged.Records = records // role=admin as the old image
		write(t, forged)         // data file, files manifest and its checksum, all consistent
		refused(t, spec.Prefix, unverified, "export "+spec.ExportArn(), "after the export ended", w.DataKeys[0])
	})
	t.Run("--unverified-exports on a protected table needs the break-glass role", func(t *testing.T) {
		prod := "prod-" + harness.UniqueID() + "-user"
		_, err := fxt.db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &prod, BillingMode: types.BillingModePayPerRequest,
			KeySchema:            []types.KeySchemaElement{{AttributeName: strPtr("user_id"), KeyType: types.KeyTypeHash}},
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: strPtr("user_id"), AttributeType: types.ScalarAttributeTypeS}}})
		require.NoError(t, err)
		t.Cleanup(func() { deleteProtected(fxt.db, prod) })
		args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", good.Prefix, "--table", prod, "--yes", "--confirm", prod}, unverified...)
		out, errOut, code := fxt.dynops(t, args...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "--unverified-exports is refused on protected table "+prod)
		assert.Contains(t, errOut, "dynops-break-glass")
	})
	t.Run("a reason without letters and an empty --prefix are bad input", func(t *testing.T) {
		refused(t, good.Prefix, []string{"--unverified-exports", "!!"}, "--unverified-exports", "has no letters")
		refused(t, "", unverified, `--prefix ""`, "every export in the bucket")
		refused(t, "/", unverified, `--prefix "/"`)
	})
}

func strPtr(s string) *string { return &s }

// rewriteSummary changes the manifest-summary.json written under root and
// its checksum file, as a forger who can write to the prefix would.
func rewriteSummary(t *testing.T, root string, w exporttest.Written, change func(string) string) {
	t.Helper()
	require.NoError(t, exporttest.Rewrite(root, w.SummaryKey, change))
}

// putKeys uploads some of the objects written under root.
func putKeys(t *testing.T, fxt fixture, root string, keys ...string) {
	t.Helper()
	require.NoError(t, exporttest.UploadKeys(context.Background(), fxt.s3, fxt.bucket, root, keys...))
}

// assertVouchedAudited: the audit log holds an export-vouched action
// accepted under reason.
func assertVouchedAudited(t *testing.T, log, reason string) {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	for _, r := range recs {
		for _, a := range r.Actions {
			if d, ok := a.Detail.(map[string]any); ok && a.What == audit.ActExportVouched && d["unverified_exports"] == reason {
				assert.Equal(t, false, d["verified"], "accepted, not verified")
				return
			}
		}
	}
	t.Errorf("no %s action with the reason %q in %s", audit.ActExportVouched, reason, log)
}
