package migrate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/fixture"
)

// Items a route matches but cannot transform (a rename onto an attribute
// the item already has) are a problem of the plan; backfill and catch-up
// run the plan's checks before their first write and refuse (exit 2,
// nothing written, no state) unless --allow-untransformable; with it they
// are counted, sampled with their key and the reason, and left behind
// while every other item is written, and verify leaves them out. A
// backfill used to write every other item and fail only at the end
// (issue 43: 9,009 items written for a route plan had refused).
func TestUntransformableItemsLeftBehind(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 120)
	// Users rename GSI1PK to user_list_key: these already have user_list_key.
	bad := []map[string]types.AttributeValue{
		{"PK": s("TENANT#clash"), "SK": s("USER#u1"), "GSI1PK": s("x"), "user_list_key": s("y")},
		{"PK": s("TENANT#clash"), "SK": s("USER#u2"), "GSI1PK": s("x"), "user_list_key": s("y")},
	}
	fixture.Put(t, d.db, source, bad)
	dir := t.TempDir()
	state, auditLog := filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return target.Dynops(t, auditLog, append([]string{"migrate", args[0], "--source", source, "--routes", routesFile(), "--state", state}, args[1:]...)...)
	}

	out, _, code := run("plan", "--allow-unmatched", "-o", "json")
	assert.Equal(t, 1, code, "plan: untransformable items are a problem without --allow-untransformable")
	var plan migrate.PlanResult
	require.NoError(t, json.Unmarshal([]byte(out), &plan), out)
	assert.EqualValues(t, 2, plan.Invalid)
	require.NotEmpty(t, plan.InvalidSample)
	assert.Contains(t, plan.InvalidSample[0], "TENANT#clash", "the sample names the item's key")
	assert.Contains(t, plan.InvalidSample[0], "user_list_key", "and why it cannot be transformed")

	out, _, code = run("plan", "--allow-unmatched", "--allow-untransformable", "-o", "json")
	assert.Equal(t, 0, code, "plan: a warning with --allow-untransformable: %s", out)

	// The backfill runs the plan's checks before its first write: refused
	// with exit 2, nothing written (it once wrote 9,009 items, then stopped).
	before := destinationCounts(t, d.db)
	_, errOut, code := run("backfill", "--allow-unmatched")
	assert.Equal(t, 2, code, "backfill is refused without --allow-untransformable: %s", errOut)
	assert.Contains(t, errOut, "nothing was written")
	assert.Contains(t, errOut, "items cannot be transformed by their route")
	assert.Contains(t, errOut, "--allow-untransformable")
	assert.Contains(t, errOut, "dynops migrate plan --source "+source)
	assert.Equal(t, before, destinationCounts(t, d.db), "the destinations are untouched")
	_, err := os.Stat(state)
	assert.True(t, os.IsNotExist(err), "no state file is written")

	out, errOut, code = run("backfill", "--allow-unmatched", "--allow-untransformable", "-o", "json")
	require.Equal(t, 0, code, "backfill leaves them behind with --allow-untransformable: %s", errOut)
	assert.Equal(t, 2, strings.Count(errOut, "backfill: left behind (untransformable): "), "each item left behind is named as it is met, not only in the result: %s", errOut)
	assert.Contains(t, errOut, "TENANT#clash")
	var res migrate.BackfillResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.EqualValues(t, 2, res.Untransformable)
	assert.Len(t, res.UntransformableSample, 2)
	assert.Equal(t, res.Read-res.Unmatched-res.Untransformable, res.WrittenTotal, "every other item is written")
	users := scanAll(t, d.db, "dev-"+product+"-users")
	for _, it := range users {
		assert.NotEqual(t, "TENANT#clash", it["PK"].(*types.AttributeValueMemberS).Value, "an untransformable item is not written")
	}
	assert.NotEmpty(t, users, "the transformable users are written")

	// The finished backfill run again is refused the same way without the
	// flag, and says it is done with it.
	_, _, code = run("backfill", "--allow-unmatched")
	assert.Equal(t, 2, code)
	out, _, code = run("backfill", "--allow-unmatched", "--allow-untransformable")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "finished already")

	// A change the route cannot transform, made after the backfill, is left
	// behind by the catch-up the same way.
	fixture.Put(t, d.db, source, []map[string]types.AttributeValue{
		{"PK": s("TENANT#clash"), "SK": s("USER#u3"), "GSI1PK": s("x"), "user_list_key": s("y")},
	})
	// The backfill allowed them, so the catch-up's default does too; told
	// otherwise it refuses the pass before its first write.
	before = destinationCounts(t, d.db)
	st := readState(t, state)
	st.Backfill.AllowUntransformable = false
	require.NoError(t, st.Save())
	_, errOut, code = run("catch-up")
	assert.Equal(t, 2, code, "catch-up is refused without --allow-untransformable: %s", errOut)
	// The stream holds every change since the backfill's position: the two
	// put before it started as well as the new one.
	assert.Contains(t, errOut, "3 item(s) cannot be transformed")
	assert.Contains(t, errOut, "USER#u3")
	assert.Contains(t, errOut, "checkpoint did not move")
	assert.Equal(t, before, destinationCounts(t, d.db), "nothing of the pass is written")
	out, _, code = run("catch-up", "--allow-untransformable")
	assert.Equal(t, 0, code, out)

	out, _, code = run("verify", "-o", "json")
	require.Equal(t, 0, code, out)
	var v migrate.VerifyResult
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.EqualValues(t, 3, v.Untransformable, "verify leaves them out of the comparison, counted")
	assert.Zero(t, v.Differences(), "and finds the destinations equal to the rest")
}
