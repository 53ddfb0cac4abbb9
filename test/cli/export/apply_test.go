package export

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/tablediff"
	fx "github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// history records the changes made to a source table, window by window, and
// writes them as AWS writes exports (moto writes no incremental exports).
type history struct {
	t       *testing.T
	db      *dynamodb.Client
	table   string
	fx      fixture
	root    string
	micros  int64
	records []exporttest.Record
}

func (h *history) get(key map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, err := h.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &h.table, Key: key, ConsistentRead: aws.Bool(true)})
	require.NoError(h.t, err)
	return out.Item
}

func (h *history) put(item map[string]types.AttributeValue) {
	key := map[string]types.AttributeValue{"user_id": item["user_id"]}
	old := h.get(key)
	fx.Put(h.t, h.db, h.table, []map[string]types.AttributeValue{item})
	h.micros += 1000
	r := exporttest.Record{Keys: exporttest.Image(h.t, key), New: exporttest.Image(h.t, h.get(key)), Micros: h.micros}
	if old != nil {
		r.Old = exporttest.Image(h.t, old)
	}
	h.records = append(h.records, r)
}

func (h *history) delete(key map[string]types.AttributeValue) {
	old := h.get(key)
	fx.Delete(h.t, h.db, h.table, []map[string]types.AttributeValue{key})
	h.micros += 1000
	h.records = append(h.records, exporttest.Record{Keys: exporttest.Image(h.t, key), Old: exporttest.Image(h.t, old), Micros: h.micros})
}

// window writes the changes since the last window as one incremental
// export, compacted to one line per key as AWS does: the NewImage of its
// last change and, as the OldImage, the item "right before the specified
// start date and time" (the developer guide's export view type), which is
// the old image of its first change in the window. The lines are split over
// two data files (plus an empty partition) in shuffled order.
func (h *history) window(prefix, id string, from, to time.Time, view string) {
	last := map[string]exporttest.Record{}
	var order []string
	for _, r := range h.records {
		k := fmt.Sprint(r.Keys)
		first, seen := last[k]
		if !seen {
			order = append(order, k)
		} else {
			r.Old = first.Old
		}
		last[k] = r
	}
	files := [][]exporttest.Record{{}, {}, {}}
	for i, k := range order {
		files[(i*7)%2] = append([]exporttest.Record{last[k]}, files[(i*7)%2]...)
	}
	_, err := exporttest.Write(h.root, h.fx.spec(exporttest.Spec{Prefix: prefix, ExportID: id, Incremental: true, View: view, From: from, To: to, Records: files}))
	require.NoError(h.t, err)
	h.records = nil
}

// unverified accepts the fixtures' exports: the emulator keeps no export
// records, so DescribeExport cannot vouch for them (exportverify.Vouch).
var unverified = []string{"--unverified-exports", "emulator: keeps no export records"}

// spec makes an export of the fixture's table in its bucket, as AWS writes
// one: the manifest names the table's ARN and the bucket, and ends after
// the upload that follows (dynops refuses data files written after the end).
func (fx fixture) spec(s exporttest.Spec) exporttest.Spec {
	if s.TableArn == "" {
		s.TableArn = fx.arn
	}
	if s.Bucket == "" {
		s.Bucket = fx.bucket
	}
	if s.EndTime.IsZero() {
		s.EndTime = time.Now().Add(10 * time.Minute)
	}
	return s
}

// TestApplyRebuildsTheSource_DDB_EXP_01: full export + two incremental
// exports (puts, updates, deletes; both view types) rebuild the source table
// as of the last window's end; proven by a diff against the source. Dry run
// first; a re-run changes nothing; a gap is refused.
func TestApplyRebuildsTheSource_DDB_EXP_01(t *testing.T) {
	fxt := newFixture(t, 0)
	ctx := context.Background()
	root := t.TempDir()
	h := &history{t: t, db: fxt.db, table: fxt.table, fx: fxt, root: root, micros: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMicro()}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)

	users := fx.Users(40)
	for i := range users {
		// No escaped characters here: moto's ImportTable stores \uXXXX
		// escapes literally and cuts a string at an escaped quote (\");
		// the changes below, applied by dynops, carry them.
		users[i]["note"] = &types.AttributeValueMemberS{Value: "日本 plain"}
	}
	fx.Put(t, fxt.db, fxt.table, users)
	var full []exporttest.Record
	for _, u := range users {
		full = append(full, exporttest.Record{New: exporttest.Image(t, u)})
	}
	_, err := exporttest.Write(root, fxt.spec(exporttest.Spec{Prefix: "rebuild/full", ExportID: "01772323200000-f0000001", ExportTime: t0,
		Records: [][]exporttest.Record{full[:25], full[25:]}}))
	require.NoError(t, err)

	// Window 1: inserts, updates, deletes; an item updated twice.
	for i := 40; i < 46; i++ {
		h.put(fx.Users(i + 1)[i])
	}
	for i := 0; i < 5; i++ {
		u := users[i]
		u["status"] = &types.AttributeValueMemberS{Value: "suspended"}
		u["note"] = &types.AttributeValueMemberS{Value: "ctl\x01\x02\x1f\x7f \"quoted\""}
		h.put(u)
	}
	users[0]["score"] = &types.AttributeValueMemberN{Value: "-1"}
	h.put(users[0])
	for i := 10; i < 14; i++ {
		h.delete(fx.UserKey(i))
	}
	h.window("rebuild/incremental", "01772326800000-i0000001", t0, t1, "NEW_AND_OLD_IMAGES")
	// Window 2 (NEW_IMAGE view): delete an item inserted in window 1,
	// re-insert a deleted one, update another.
	h.delete(fx.UserKey(41))
	h.put(fx.Users(11)[10])
	users[20]["roles"] = &types.AttributeValueMemberSS{Value: []string{"admin"}}
	h.put(users[20])
	h.window("rebuild/incremental", "01772330400000-i0000002", t1, t2, "NEW_IMAGE")
	upload(t, fxt, root)

	rebuilt := "dev-" + harness.UniqueID() + "-user"
	_, _, code := fxt.dynops(t, append([]string{"export", "import", "--bucket", fxt.bucket, "--prefix", "rebuild/full", "--table", rebuilt, "--hash-key", "user_id:S", "--yes"}, unverified...)...)
	require.Equal(t, 0, code)
	t.Cleanup(func() { deleteProtected(fxt.db, rebuilt) })
	diff := func() *tablediff.Report {
		rep, err := tablediff.Diff(ctx, fxt.db, tablediff.Options{Source: fxt.table, Target: rebuilt, TempDir: t.TempDir()})
		require.NoError(t, err)
		return rep
	}
	before := diff()
	require.NotZero(t, before.Differences(), "the import alone is the table as of the full export")

	args := append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/incremental", "--table", rebuilt}, unverified...)
	out, _, code := fxt.dynops(t, args...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "DRY RUN")
	assert.Contains(t, out, "write budget on "+rebuilt+": none (on-demand table", "the plan says the budget (none: on-demand, no flag)")
	assert.Equal(t, before.Differences(), diff().Differences(), "a dry run changes nothing")
	assert.Contains(t, out, "estimate on "+rebuilt+": ", "the dry run estimates the writes")
	// --plan-out: each key the chain writes, once, with its item now (read
	// from the rebuilt table) and after its last change (null: deleted).
	plan := filepath.Join(t.TempDir(), "apply-plan.jsonl")
	_, errOut, code := fxt.dynops(t, append(args, "--plan-out", plan)...)
	require.Equal(t, 0, code, errOut)
	entries := fx.ReadPlan(t, plan)
	require.NotEmpty(t, entries)
	assert.LessOrEqual(t, len(entries), 11+4+2+1, "a key changed in both windows is planned once")
	for _, e := range entries {
		assert.Equal(t, e.Action == "delete", string(e.After) == "null", "%s: a delete leaves nothing", e.Key)
	}
	assert.Equal(t, before.Differences(), diff().Differences(), "a dry run with a plan changes nothing")
	out, _, code = fxt.dynops(t, append(args, "-o", "json", "--max-write-units", "50")...)
	require.Equal(t, 0, code)
	var dry export.ApplyReport
	require.NoError(t, json.Unmarshal([]byte(out), &dry))
	require.NotNil(t, dry.WriteEstimate, "the dry run's JSON has the estimate")
	assert.Equal(t, int64(11+4+2+1), dry.WriteEstimate.Items, "every put and delete of the two windows")
	assert.Equal(t, 50.0*dry.WriteEstimate.Seconds, dry.WriteEstimate.Units, "the time at the budget")

	out, _, code = fxt.dynops(t, append(args, "--yes", "-o", "json", "--max-write-units", "50")...)
	require.Equal(t, 0, code)
	var rep export.ApplyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Increments, 2)
	require.NotNil(t, rep.WriteBudget, "the report says the budget")
	assert.Equal(t, 50.0, rep.WriteBudget.UnitsPerSecond)
	assert.Equal(t, "--max-write-units", rep.WriteBudget.Source)
	require.NotNil(t, rep.WriteCapacity, "the report says what the writes used")
	assert.Positive(t, rep.WriteCapacity.Used, "charged what the emulator reported")
	// The estimate is not compared with the use here (pitr repair's
	// conditional puts are: TestRepairEstimateMatchesWhatTheRunUsed).
	assert.True(t, rep.Since.Equal(t0), "the chain starts at the full export's exportTime (from the import tag): %s", rep.Since)
	assert.True(t, rep.Through.Equal(t2), "applied through the last window's end: %s", rep.Through)
	assert.Equal(t, [2]int{11, 4}, [2]int{rep.Increments[0].Puts, rep.Increments[0].Deletes})
	assert.Equal(t, [2]int{2, 1}, [2]int{rep.Increments[1].Puts, rep.Increments[1].Deletes})
	after := diff()
	assert.Zero(t, after.Differences(), "full + incrementals = the source: %+v", after.Sample)
	assert.Equal(t, after.SourceItems, after.TargetItems)

	t.Run("re-run is a no-op", func(t *testing.T) {
		out, _, code := fxt.dynops(t, append(args, "--yes")...)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "already applied: skipped")
		assert.Zero(t, diff().Differences())
	})
	t.Run("a gap is refused and changes nothing", func(t *testing.T) {
		gap := t.TempDir()
		_, err := exporttest.Write(gap, fxt.spec(exporttest.Spec{Prefix: "rebuild/gap", ExportID: "01772337600000-i0000004", Incremental: true, From: t3, To: t3.Add(time.Hour),
			Records: [][]exporttest.Record{{{Keys: exporttest.Image(t, fx.UserKey(1)), Micros: t3.UnixMicro()}}}}))
		require.NoError(t, err)
		require.NoError(t, exporttest.Upload(ctx, fxt.s3, fxt.bucket, gap))
		_, errOut, code := fxt.dynops(t, append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/gap", "--table", rebuilt, "--yes"}, unverified...)...)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "gap between")
		assert.Zero(t, diff().Differences(), "nothing applied")
	})
	t.Run("another table's export is refused: exit 2, nothing applied", func(t *testing.T) {
		dir := t.TempDir()
		other := strings.Replace(fxt.arn, fxt.table, "dev-"+harness.UniqueID()+"-orders", 1)
		_, err := exporttest.Write(dir, fxt.spec(exporttest.Spec{Prefix: "rebuild/foreign", ExportID: "01772334000000-i0000005", Incremental: true, From: t2, To: t3,
			TableArn: other, Records: [][]exporttest.Record{{{Keys: exporttest.Image(t, fx.UserKey(1)), New: exporttest.Image(t, map[string]types.AttributeValue{"user_id": fx.UserKey(1)["user_id"], "role": &types.AttributeValueMemberS{Value: "admin"}}), Micros: t2.UnixMicro()}}}}))
		require.NoError(t, err)
		require.NoError(t, exporttest.Upload(ctx, fxt.s3, fxt.bucket, dir))
		out, errOut, code := fxt.dynops(t, append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/foreign", "--table", rebuilt, "--yes"}, unverified...)...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "its manifest says table "+other+", not "+fxt.arn, "the source is the imported full export's table")
		assert.Zero(t, diff().Differences(), "nothing applied")
	})
	t.Run("a table without an import tag needs --source-table; a bad one is bad input", func(t *testing.T) {
		_, errOut, code := fxt.dynops(t, append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/incremental", "--table", fxt.table, "--since", t0.Format(time.RFC3339)}, unverified...)...)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, "pass --source-table ARN")
		_, errOut, code = fxt.dynops(t, append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/incremental", "--table", fxt.table, "--source-table", fxt.table}, unverified...)...)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, "is not a DynamoDB table ARN")
	})
	t.Run("a full export is refused", func(t *testing.T) {
		_, errOut, code := fxt.dynops(t, append([]string{"export", "apply", "--bucket", fxt.bucket, "--prefix", "rebuild/full", "--table", rebuilt}, unverified...)...)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "is a full export")
	})
	_ = filepath.Join
}
