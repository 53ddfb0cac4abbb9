package export

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/tablediff"
	fx "github.com/dynops/dynops/test/helpers/fixture"
)

// tableState is every item of the table by user_id, as checksums.
func tableState(t *testing.T, db *dynamodb.Client, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	for {
		page, err := db.Scan(context.Background(), in)
		require.NoError(t, err)
		for _, it := range page.Items {
			out[it["user_id"].(*types.AttributeValueMemberS).Value] = tablediff.Checksum(it, nil)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func with(item map[string]types.AttributeValue, attr, value string) map[string]types.AttributeValue {
	c := map[string]types.AttributeValue{}
	for k, v := range item {
		c[k] = v
	}
	c[attr] = &types.AttributeValueMemberS{Value: value}
	return c
}

// TestRevertUndoesAWindow_DDB_EXP_01: a bad deploy's two windows (updates,
// an item updated in both, deletes, inserts, an insert deleted again, a
// delete re-inserted) are undone from their incremental exports: every key
// is back as it was at the window's start, except one changed after the
// window, which is a conflict, left alone, listed, and exit 1. The dry run
// changes nothing; a re-run writes nothing; a NEW_IMAGE export is refused.
func TestRevertUndoesAWindow_DDB_EXP_01(t *testing.T) {
	fxt := newFixture(t, 0)
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	h := &history{t: t, db: fxt.db, table: fxt.table, fx: fxt, root: root, micros: t0.UnixMicro()}
	users := fx.Users(30)
	fx.Put(t, fxt.db, fxt.table, users)
	atStart := tableState(t, fxt.db, fxt.table)

	// Window 1, the bad deploy: ten updates (one item twice), five deletes, six inserts.
	for i := 0; i < 10; i++ {
		h.put(with(users[i], "status", "bad"))
	}
	h.put(with(users[0], "status", "bad twice"))
	for i := 10; i < 15; i++ {
		h.delete(fx.UserKey(i))
	}
	inserted := fx.Users(46)
	for i := 40; i < 46; i++ {
		h.put(inserted[i])
	}
	h.window("incident/INC-7/incremental", "01772326800000-r0000001", t0, t1, "NEW_AND_OLD_IMAGES")
	// Window 2: the deploy still running.
	for i := 0; i < 3; i++ {
		h.put(with(users[i], "status", "worse"))
	}
	h.delete(fx.UserKey(40))
	h.put(with(users[10], "status", "re-inserted by the bad deploy"))
	h.window("incident/INC-7/incremental", "01772330400000-r0000002", t1, t2, "NEW_AND_OLD_IMAGES")
	// After the window, a legitimate write to a key the deploy changed.
	later := with(users[5], "status", "fixed by support after the window")
	fx.Put(t, fxt.db, fxt.table, []map[string]types.AttributeValue{later})
	upload(t, fxt, root)

	want := map[string]string{}
	for k, v := range atStart {
		want[k] = v
	}
	want["user_00005"] = tablediff.Checksum(later, nil)
	beforeRevert := tableState(t, fxt.db, fxt.table)

	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-7/incremental", "--table", fxt.table}, unverified...)
	out, errOut, code := fxt.dynops(t, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "DRY RUN")
	assert.Contains(t, out, "2026-03-01T00:00:00Z .. 2026-03-01T02:00:00Z", "the window, from the exports")
	assert.Equal(t, beforeRevert, tableState(t, fxt.db, fxt.table), "a dry run changes nothing")

	out, errOut, code = fxt.dynops(t, append(args, "--yes", "-o", "json")...)
	assert.Equal(t, 1, code, "a conflict was left alone: exit 1 (%s)", errOut)
	var rep export.RevertReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, int64(21), rep.Keys, "keys the window changed")
	assert.Equal(t, int64(14), rep.Restores, "nine updated (not user 5), five deleted (one re-inserted since)")
	assert.Equal(t, int64(5), rep.Deletes, "inserted in the window and still there")
	assert.Equal(t, int64(1), rep.AlreadyReverted, "inserted and deleted again in the window")
	assert.Equal(t, int64(1), rep.Conflicts, "changed after the window")
	require.Len(t, rep.ConflictSample, 1)
	assert.Contains(t, string(rep.ConflictSample[0].Key), "user_00005")
	assert.Equal(t, want, tableState(t, fxt.db, fxt.table), "every key as at the window's start, the later write kept")
	rec := lastRecord(t, fxt.audit)
	assert.Equal(t, int64(14), rec.Counts["restores"], "the audit records what was done")
	assert.Equal(t, int64(1), rec.Counts["conflicts"])
	var act map[string]any
	for _, a := range rec.Actions {
		if a.What == audit.ActExportRevert {
			act, _ = a.Detail.(map[string]any)
		}
	}
	require.NotNil(t, act, "the revert is an audited action")
	assert.EqualValues(t, 21, act["keys_changed"], "the count is a count, not hashed as a key")
	assert.Equal(t, rep.KeysDigest, act["keys_digest"], "the keys by their digest")
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, rep.KeysDigest)
	assert.NotContains(t, act, "keys")
	assert.Equal(t, fxt.arn, act["source_table"], "the source table is named")
	assert.Len(t, act["export_arns"], 2, "and every export ARN")
	assert.Equal(t, "emulator: keeps no export records", act["unverified_exports"], "and the reason they were accepted")
	recs, err := audit.Read(fxt.audit)
	require.NoError(t, err)
	var started *audit.Plan
	for _, r := range recs {
		if r.RunID == rec.RunID && r.Event == "started" {
			started = r.Plan
		}
	}
	require.NotNil(t, started)
	assert.Contains(t, started.Targets, fxt.arn, "the started record names the source table")

	t.Run("a re-run writes nothing", func(t *testing.T) {
		out, errOut, code := fxt.dynops(t, append(args, "--yes", "-o", "json")...)
		assert.Equal(t, 1, code, errOut)
		var again export.RevertReport
		require.NoError(t, json.Unmarshal([]byte(out), &again), out)
		assert.Equal(t, int64(20), again.AlreadyReverted)
		assert.Zero(t, again.Restores+again.Deletes)
		assert.Equal(t, want, tableState(t, fxt.db, fxt.table))
	})
	t.Run("an export without old images is refused, nothing written", func(t *testing.T) {
		dir := t.TempDir()
		_, err := exporttest.Write(dir, fxt.spec(exporttest.Spec{Prefix: "incident/INC-8/incremental", ExportID: "01772334000000-r0000003", Incremental: true, View: "NEW_IMAGE",
			From: t2, To: t2.Add(time.Hour), Records: [][]exporttest.Record{{{Keys: exporttest.Image(t, fx.UserKey(1)), New: exporttest.Image(t, with(users[1], "status", "x")), Micros: t2.UnixMicro()}}}}))
		require.NoError(t, err)
		upload(t, fxt, dir)
		out, errOut, code := fxt.dynops(t, append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-8/incremental", "--table", fxt.table, "--yes"}, unverified...)...)
		assert.Equal(t, 2, code, "a refusal is exit 2")
		assert.Empty(t, out, "nothing on stdout claims work")
		assert.Contains(t, errOut, "without old images")
		assert.Contains(t, errOut, "NEW_AND_OLD_IMAGES", "the error says the fix")
		assert.Equal(t, want, tableState(t, fxt.db, fxt.table))
	})
	t.Run("a missing --prefix is bad input", func(t *testing.T) {
		_, errOut, code := fxt.dynops(t, "export", "revert", "--bucket", fxt.bucket, "--table", fxt.table)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "--prefix")
	})
}

func lastRecord(t *testing.T, log string) audit.Record {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[len(recs)-1]
}
