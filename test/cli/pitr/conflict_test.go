package pitr

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// oneDamaged is a "restored" table of 3 users (with a version attribute
// ver 3 when versioned) and an original whose user 1 was damaged; the diff's
// keys file names that one key.
func oneDamaged(t *testing.T, versioned bool) (db *dynamodb.Client, from, to, log, keys string) {
	t.Helper()
	db = dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	from, to = "dev-"+id+"-restored", "dev-"+id+"-user"
	users := fixture.Users(3)
	if versioned {
		for _, u := range users {
			u["ver"] = &types.AttributeValueMemberN{Value: "3"}
		}
	}
	for _, n := range []string{from, to} {
		fixture.Create(t, db, fixture.Table{Name: n, HashKey: "user_id"})
		fixture.Put(t, db, n, users)
	}
	damaged := fixture.Users(3)[1]
	damaged["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
	if versioned {
		damaged["ver"] = &types.AttributeValueMemberN{Value: "4"}
	}
	fixture.Put(t, db, to, []map[string]types.AttributeValue{damaged})
	log = filepath.Join(t.TempDir(), "audit.jsonl")
	keys = filepath.Join(t.TempDir(), "keys.jsonl")
	_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", from, "--target", to, "--keys-out", keys)
	require.Equal(t, 0, code, errOut)
	return db, from, to, log, keys
}

// otherWriter is a proxy in front of the emulator whose first PutItem is
// preceded by another writer's update of user 1 in table (set: an
// UpdateExpression over x, ver and the values :x, :one).
func otherWriter(t *testing.T, db *dynamodb.Client, table, set string) string {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("emulator only: the other writer acts from a proxy in front of the emulator")
	}
	p, err := faults.Interleave(target.Emulator.URL, "PutItem", func() {
		values := map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "added by the app"}}
		if strings.Contains(set, ":one") {
			values[":one"] = &types.AttributeValueMemberN{Value: "1"}
		}
		in := &dynamodb.UpdateItemInput{TableName: &table, Key: fixture.UserKey(1), UpdateExpression: aws.String(set), ExpressionAttributeValues: values}
		if _, err := db.UpdateItem(context.Background(), in); err != nil {
			t.Errorf("the other writer: %v", err)
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p.URL
}

// TestRepairOverAnAttributeAddedSinceTheRead (issue 44): the repair's
// condition names only the attributes it read, so an attribute the
// application adds between the repair's read and its put is not covered.
// The put asks for the item it replaced and the repair reports the key as a
// conflict naming the attribute: exit 1, in the result, the JSON, the
// record and the audit.
func TestRepairOverAnAttributeAddedSinceTheRead(t *testing.T) {
	db, from, to, log, keys := oneDamaged(t, false)
	via := otherWriter(t, db, to, "SET x = :x")
	out, errOut, code := target.DynopsVia(t, via, log, "pitr", "repair", "--from", from, "--to", to, "--keys", keys,
		"--allow-unrelated-source", "test: two fixture tables", "--unscoped", "test: every difference is damage", "--yes", "-o", "json")
	require.Equal(t, 1, code, "a write over a change since the read is a conflict: exit 1\n%s", errOut)
	var rep struct {
		Result struct {
			Copied           int64 `json:"copied"`
			ChangedSinceRead int64 `json:"changed_since_read"`
			ConflictSample   []struct {
				ChangedSinceRead []string `json:"changed_since_read"`
			} `json:"conflict_sample"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, int64(1), rep.Result.Copied, "the key was written")
	assert.Equal(t, int64(1), rep.Result.ChangedSinceRead)
	require.Len(t, rep.Result.ConflictSample, 1)
	assert.Equal(t, []string{"x"}, rep.Result.ConflictSample[0].ChangedSinceRead, "the attribute the put replaced is named")
	assert.Equal(t, int64(1), lastRecord(t, log).Counts["changed_since_read"], "and audited")
	record, err := os.ReadFile(keys + ".repair.jsonl")
	require.NoError(t, err)
	assert.Contains(t, string(record), `"changed_since_read":["x"]`, "and in the record")
	out, _, _ = target.Dynops(t, log, "pitr", "verify", "--record", keys+".repair.jsonl")
	assert.Contains(t, out, "another writer", "pitr verify notes it")
}

// TestRepairWithAVersionAttribute (issue 44): with --version-attribute the
// repair's write is conditional on the version the application increments:
// a write in between makes it a conflict, left alone, nothing lost; a
// re-run copies the restored item back with the next version, and `pitr
// verify` holds the version the repair wrote.
func TestRepairWithAVersionAttribute(t *testing.T) {
	db, from, to, log, keys := oneDamaged(t, true)
	via := otherWriter(t, db, to, "SET x = :x, ver = ver + :one")
	args := []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys, "--version-attribute", "ver",
		"--allow-unrelated-source", "test: two fixture tables", "--unscoped", "test: every difference is damage", "--yes"}
	_, errOut, code := target.DynopsVia(t, via, log, args...)
	assert.Equal(t, 1, code, errOut)
	it := fixture.Get(t, db, to, fixture.UserKey(1))
	assert.Equal(t, &types.AttributeValueMemberS{Value: "added by the app"}, it["x"], "the application's write is kept")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "5"}, it["ver"])

	// The other writer's change is now the original's: diff again, repair again.
	_, errOut, code = target.Dynops(t, log, "table", "diff", "--source", from, "--target", to, "--keys-out", keys+".2")
	require.Equal(t, 0, code, errOut)
	args[7] = keys + ".2"
	_, errOut, code = target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	it = fixture.Get(t, db, to, fixture.UserKey(1))
	assert.Equal(t, &types.AttributeValueMemberS{Value: "active"}, it["status"], "repaired")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "6"}, it["ver"], "with the next version")
	out, errOut, code := target.Dynops(t, log, "pitr", "verify", "--record", keys+".2.repair.jsonl")
	assert.Equal(t, 0, code, "verify holds the version the repair wrote\n%s%s", out, errOut)
	_, errOut, code = target.Dynops(t, log, args...)
	assert.Equal(t, 0, code, "a re-run finds it repaired (the version left out)\n%s", errOut)
	assert.Equal(t, &types.AttributeValueMemberN{Value: "6"}, fixture.Get(t, db, to, fixture.UserKey(1))["ver"], "and writes nothing")
}

// TestRepairPlanOut (issue 44): --plan-out FILE writes each key's item
// before and after the repair to a new 0600 file: on the dry run (which
// writes nothing to the table) and on the run; an existing file is refused
// (exit 2, left as it was); --hashes-only writes checksums, no values.
func TestRepairPlanOut(t *testing.T) {
	db, from, to, log, keys := oneDamaged(t, false)
	base := []string{"pitr", "repair", "--from", from, "--to", to, "--keys", keys,
		"--allow-unrelated-source", "test: two fixture tables", "--unscoped", "test: every difference is damage"}
	damaged, restored := fixture.Get(t, db, to, fixture.UserKey(1)), fixture.Users(3)[1]
	dir := t.TempDir()

	plan := filepath.Join(dir, "plan.jsonl")
	_, errOut, code := target.Dynops(t, log, append(base, "--plan-out", plan)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "plan: 1 key(s)")
	entries := fixture.ReadPlan(t, plan)
	require.Len(t, entries, 1)
	assert.Equal(t, "put", entries[0].Action)
	assert.Contains(t, string(entries[0].Before), "corrupted", "the item now")
	assert.Contains(t, string(entries[0].After), "active", "the item after the repair")
	assert.Equal(t, damaged, fixture.Get(t, db, to, fixture.UserKey(1)), "a dry run writes nothing to the table")

	t.Run("an existing file is refused and left as it was", func(t *testing.T) {
		was, err := os.ReadFile(plan)
		require.NoError(t, err)
		out, errOut, code := target.Dynops(t, log, append(base, "--plan-out", plan, "--yes")...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, plan)
		now, err := os.ReadFile(plan)
		require.NoError(t, err)
		assert.Equal(t, was, now)
		assert.Equal(t, damaged, fixture.Get(t, db, to, fixture.UserKey(1)), "nothing written")
	})
	t.Run("the run writes its plan too; --hashes-only: checksums, no values", func(t *testing.T) {
		hashes := filepath.Join(dir, "run.jsonl")
		_, errOut, code := target.Dynops(t, log, append(base, "--plan-out", hashes, "--hashes-only", "--yes")...)
		require.Equal(t, 0, code, errOut)
		entries := fixture.ReadPlan(t, hashes)
		require.Len(t, entries, 1)
		require.NotNil(t, entries[0].BeforeChecksum)
		assert.Equal(t, tablediff.Checksum(damaged, nil), *entries[0].BeforeChecksum)
		assert.Equal(t, tablediff.Checksum(restored, nil), *entries[0].AfterChecksum)
		b, err := os.ReadFile(hashes)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "corrupted", "no attribute value in the file")
		assert.Equal(t, restored, fixture.Get(t, db, to, fixture.UserKey(1)), "repaired")
	})
}
