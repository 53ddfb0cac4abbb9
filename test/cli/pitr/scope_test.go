package pitr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// scopedFixture is a "restored" table of 10 users and an "original" in
// which users 0-2 were damaged, 3-4 deleted (the incident), and users 5-6
// updated by the application (good writes): the diff says 5 changed and 2
// missing, and only the first 5 keys are the damage.
func scopedFixture(t *testing.T) (db *dynamodb.Client, from, to, log, keys string, orig []map[string]types.AttributeValue) {
	t.Helper()
	db = dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	from, to = "dev-"+id+"-restored", "dev-"+id+"-user"
	fixture.Create(t, db, fixture.Table{Name: from, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: to, HashKey: "user_id"})
	orig = fixture.Users(10)
	fixture.Put(t, db, from, orig)
	fixture.Put(t, db, to, orig)
	var now []map[string]types.AttributeValue
	for i, status := range map[int]string{0: "corrupted", 1: "corrupted", 2: "corrupted", 5: "upgraded", 6: "upgraded"} {
		it := fixture.Users(10)[i]
		it["status"] = &types.AttributeValueMemberS{Value: status}
		now = append(now, it)
	}
	fixture.Put(t, db, to, now)
	fixture.Delete(t, db, to, []map[string]types.AttributeValue{fixture.UserKey(3), fixture.UserKey(4)})
	log = filepath.Join(t.TempDir(), "audit.jsonl")
	keys = filepath.Join(t.TempDir(), "keys.jsonl")
	_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", from, "--target", to, "--keys-out", keys)
	require.Equal(t, 0, code, errOut)
	return db, from, to, log, keys, orig
}

// TestRepairWithoutScopeIsRefused_DDB_PITR_02: a repair that would copy back
// differences a restore point cannot tell from good writes is refused with
// --yes (exit 2, nothing written), saying how many changed and missing items
// may be good writes and how to scope it or decide; the dry run says it too.
// --unscoped REASON is the decision: every difference is copied back.
func TestRepairWithoutScopeIsRefused_DDB_PITR_02(t *testing.T) {
	db, from, to, log, keys, orig := scopedFixture(t)
	base := []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables"}

	out, errOut, code := target.Dynops(t, log, base...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "WARNING: not scoped to the damage window: 7 of them may be good writes")

	out, errOut, code = target.Dynops(t, log, append(base, "--yes")...)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "5 changed and 2 missing item(s) differ from the restore point")
	assert.Contains(t, errOut, "may be a good write")
	assert.Contains(t, errOut, "--damage-until TIME and --damage-stream")
	assert.Contains(t, errOut, "--unscoped REASON")
	assert.Contains(t, errOut, "nothing was changed")
	assert.NotContains(t, out, "Repaired")
	assert.Nil(t, fixture.Get(t, db, to, fixture.UserKey(3)), "nothing written (read back)")

	_, errOut, code = target.Dynops(t, log, append(base, "--unscoped", " ")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--unscoped needs a REASON")

	out, errOut, code = target.Dynops(t, log, append(base, "--unscoped", "test: every difference is damage", "--yes", "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	var doc struct {
		MayBeGoodWrites int64         `json:"may_be_good_writes"`
		Result          repair.Result `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, int64(7), doc.MayBeGoodWrites)
	assert.Equal(t, int64(7), doc.Result.Copied)
	assert.Equal(t, orig[5], fixture.Get(t, db, to, fixture.UserKey(5)), "unscoped, the good write is reverted: what --unscoped decides")
}

// TestRepairScopedByAKeyListAndVerified_DDB_PITR_02: scoped by a list of the
// damaged keys, the repair copies back only those; the application's
// updates are left alone (out of scope) and listed in the record;
// `pitr verify` of the record exits 0. When a key the repair put back is
// damaged again, verify exits 1 naming it; a key list with a bad line is
// refused naming the file and line.
func TestRepairScopedByAKeyListAndVerified_DDB_PITR_02(t *testing.T) {
	db, from, to, log, keys, orig := scopedFixture(t)
	list := filepath.Join(t.TempDir(), "damaged.jsonl")
	var lines string
	for i := range 5 {
		lines += fmt.Sprintf("{\"user_id\":{\"S\":\"user_%05d\"}}\n", i)
	}
	require.NoError(t, os.WriteFile(list, []byte("# from the deploy's logs\n"+lines), 0o600))
	until := time.Now().UTC().Format(time.RFC3339)
	args := []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
		"--damage-since", "2020-01-01T00:00:00Z", "--damage-until", until, "--damage-keys", list}

	out, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "copy back 5 missing or changed item(s) written in the window")
	assert.Contains(t, out, "leave alone 2 differing item(s) not written in the window: good writes")

	out, errOut, code = target.Dynops(t, log, append(args, "--yes")...)
	require.Equal(t, 0, code, errOut)
	record := keys + ".repair.jsonl"
	assert.Contains(t, out, "left out of scope (good writes)")
	assert.Contains(t, out, record)
	for i := range 5 {
		assert.Equal(t, orig[i], fixture.Get(t, db, to, fixture.UserKey(i)), "damaged user %d is back", i)
	}
	for _, i := range []int{5, 6} {
		assert.Equal(t, "upgraded", fixture.Get(t, db, to, fixture.UserKey(i))["status"].(*types.AttributeValueMemberS).Value, "user %d's good write is kept", i)
	}
	outcomes := map[string]repair.Outcome{}
	_, err := repair.ReadRecord(record, func(o repair.KeyOutcome) error { outcomes[string(o.Key)] = o.Outcome; return nil })
	require.NoError(t, err)
	assert.Equal(t, repair.OutOutOfScope, outcomes[`{"user_id":{"S":"user_00005"}}`])
	assert.Equal(t, repair.OutCopied, outcomes[`{"user_id":{"S":"user_00003"}}`])

	out, errOut, code = target.Dynops(t, log, "pitr", "verify", "--record", record)
	require.Equal(t, 0, code, errOut+out)
	assert.Contains(t, out, "The repair's promise holds.")

	bad := fixture.Users(10)[1]
	bad["status"] = &types.AttributeValueMemberS{Value: "corrupted again"}
	fixture.Put(t, db, to, []map[string]types.AttributeValue{bad})
	out, errOut, code = target.Dynops(t, log, "pitr", "verify", "--record", record)
	assert.Equal(t, 1, code, errOut+out)
	assert.Contains(t, out, `broken {"user_id":{"S":"user_00001"}} (copied)`)

	// A good write reverted by hand breaks the promise too.
	fixture.Put(t, db, to, []map[string]types.AttributeValue{orig[5], orig[1]})
	out, _, code = target.Dynops(t, log, "pitr", "verify", "--record", record)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `broken {"user_id":{"S":"user_00005"}} (out_of_scope): left alone by the repair, yet the original holds the restored value now`)

	require.NoError(t, os.WriteFile(list, []byte(lines+"user_00009\n"), 0o600))
	_, errOut, code = target.Dynops(t, log, append(args, "--yes")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, list+" line 6")
	_, errOut, code = target.Dynops(t, log, "pitr", "verify", "--record", list)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "not a repair record")
}

// TestRepairStreamScopeRefusesWhatItCannotCover_DDB_PITR_02: --damage-stream
// fails closed (exit 2, nothing written) when the stream cannot list every
// key written in the window: no stream, a window older than the stream's 24
// hours, or one that starts before the stream was enabled.
func TestRepairStreamScopeRefusesWhatItCannotCover_DDB_PITR_02(t *testing.T) {
	db, from, to, log, keys, _ := scopedFixture(t)
	scoped := func(since string) []string {
		return []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
			"--damage-since", since, "--damage-until", time.Now().UTC().Format(time.RFC3339), "--damage-stream", "--yes"}
	}
	recent := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	_, errOut, code := target.Dynops(t, log, scoped(recent)...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, to+" has no stream enabled")
	assert.Contains(t, errOut, "--damage-keys FILE")

	withStream := "dev-" + harness.UniqueID() + "-streamed"
	fixture.Create(t, db, fixture.Table{Name: withStream, HashKey: "user_id", Stream: true})
	to = withStream
	_, errOut, code = target.Dynops(t, log, scoped(time.Now().Add(-48*time.Hour).UTC().Format(time.RFC3339))...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "more than 24 hours ago")
	_, errOut, code = target.Dynops(t, log, scoped(recent)...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "was enabled at")

	_, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--damage-stream")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "need --damage-until TIME")
	_, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--damage-stream", "--damage-until", "yesterday")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--damage-until "yesterday" is not an RFC3339 time`)
}

// TestRepairScopedByAnUpdatedAtAttribute_DDB_PITR_02: dated by the
// application's updated_at attribute, items written in the window are put
// back, as are items changed without the attribute moving (a script that
// does not keep it: damage) and deleted items (undated: counted as possible
// good deletes); items dated after the window are left alone as good writes
// (the attribute holds only the last write).
func TestRepairScopedByAnUpdatedAtAttribute_DDB_PITR_02(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	from, to := "dev-"+id+"-restored", "dev-"+id+"-user"
	fixture.Create(t, db, fixture.Table{Name: from, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: to, HashKey: "user_id"})
	at := func(it map[string]types.AttributeValue, status, when string) map[string]types.AttributeValue {
		c := map[string]types.AttributeValue{}
		for k, v := range it {
			c[k] = v
		}
		c["status"] = &types.AttributeValueMemberS{Value: status}
		c["updated_at"] = &types.AttributeValueMemberS{Value: when}
		return c
	}
	const before, inside, after = "2026-11-21T08:00:00Z", "2026-11-21T09:35:00Z", "2026-11-21T10:00:00Z"
	var orig []map[string]types.AttributeValue
	for _, it := range fixture.Users(10) {
		orig = append(orig, at(it, "active", before))
	}
	fixture.Put(t, db, from, orig)
	fixture.Put(t, db, to, orig)
	fixture.Put(t, db, to, []map[string]types.AttributeValue{
		at(orig[0], "corrupted", before), at(orig[1], "corrupted", before), at(orig[2], "corrupted", before), // the script kept updated_at
		at(orig[3], "corrupted", inside),
		at(orig[5], "upgraded", after), at(orig[6], "upgraded", after), // good writes after the window
	})
	fixture.Delete(t, db, to, []map[string]types.AttributeValue{fixture.UserKey(4)})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	keys := filepath.Join(t.TempDir(), "keys.jsonl")
	_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", from, "--target", to, "--keys-out", keys)
	require.Equal(t, 0, code, errOut)
	args := []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
		"--damage-since", "2026-11-21T09:29:00Z", "--damage-until", "2026-11-21T09:41:00Z", "--damage-attribute", "updated_at"}

	out, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "copy back 5 missing or changed item(s) written in the window")
	assert.Contains(t, out, "leave alone 2 differing item(s) not written in the window: good writes")
	assert.Contains(t, out, "1 of the items to copy back were deleted, which attribute updated_at of "+to+" cannot date")

	out, errOut, code = target.Dynops(t, log, append(args, "--yes", "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	var doc struct {
		MayBeGoodWrites int64         `json:"may_be_good_writes"`
		Result          repair.Result `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, int64(1), doc.MayBeGoodWrites, "the undated delete")
	assert.Equal(t, int64(5), doc.Result.Copied)
	assert.Equal(t, int64(2), doc.Result.LeftOutOfScope)
	assert.Zero(t, doc.Result.Conflicts)
	for i := range 5 {
		assert.Equal(t, orig[i], fixture.Get(t, db, to, fixture.UserKey(i)), "user %d is back", i)
	}
	for _, i := range []int{5, 6} {
		assert.Equal(t, "upgraded", fixture.Get(t, db, to, fixture.UserKey(i))["status"].(*types.AttributeValueMemberS).Value, "user %d's good write is kept", i)
	}
	_, errOut, code = target.Dynops(t, log, "pitr", "verify", "--record", keys+".repair.jsonl")
	assert.Equal(t, 0, code, errOut)
}

// TestScopedRepairRunTwice_DDB_PITR_02: a second run of a stream-scoped
// repair sees the first run's own writes after the window; in both write
// modes a key that already holds the restored value is already equal, not
// a conflict, and verify still finds the promise kept.
func TestScopedRepairRunTwice_DDB_PITR_02(t *testing.T) {
	for _, mode := range [][]string{nil, {"--unconditional"}} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			db := dynamodb.NewFromConfig(target.AWSConfig(t))
			id := harness.UniqueID()
			from, to := "dev-"+id+"-restored", "dev-"+id+"-user"
			fixture.Create(t, db, fixture.Table{Name: from, HashKey: "user_id"})
			fixture.Create(t, db, fixture.Table{Name: to, HashKey: "user_id", Stream: true})
			orig := fixture.Users(6)
			fixture.Put(t, db, from, orig)
			fixture.Put(t, db, to, orig)
			second := func() time.Time { // stream times are whole seconds: each phase in its own
				now := time.Now()
				time.Sleep(now.Truncate(time.Second).Add(1100 * time.Millisecond).Sub(now))
				return time.Now().UTC()
			}
			since := second()
			var bad []map[string]types.AttributeValue
			for _, it := range fixture.Users(3) {
				it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
				bad = append(bad, it)
			}
			fixture.Put(t, db, to, bad)
			until := second()
			second()
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			keys := filepath.Join(t.TempDir(), "keys.jsonl")
			_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", from, "--target", to, "--keys-out", keys)
			require.Equal(t, 0, code, errOut)
			args := append([]string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
				"--damage-since", since.Format(time.RFC3339Nano), "--damage-until", until.Format(time.RFC3339Nano), "--damage-stream", "--yes", "-o", "json"}, mode...)
			for run, want := range []repair.Result{{Copied: 3}, {AlreadyEqual: 3}} {
				out, errOut, code := target.Dynops(t, log, args...)
				require.Equal(t, 0, code, "run %d: %s", run+1, errOut)
				var doc struct {
					Result repair.Result `json:"result"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
				assert.Equal(t, [3]int64{want.Copied, want.AlreadyEqual, 0}, [3]int64{doc.Result.Copied, doc.Result.AlreadyEqual, doc.Result.Conflicts}, "run %d: copied, already equal, conflicts", run+1)
				_, errOut, code = target.Dynops(t, log, "pitr", "verify", "--record", keys+".repair.jsonl")
				assert.Equal(t, 0, code, "run %d: %s", run+1, errOut)
			}
			for i := range 3 {
				assert.Equal(t, orig[i], fixture.Get(t, db, to, fixture.UserKey(i)))
			}
		})
	}
}
