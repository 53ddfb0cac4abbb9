package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/tablediff"
	fx "github.com/dynops/dynops/test/helpers/fixture"
)

// TestRevertPlanOut (issue 44): a dry run of export revert writes, for
// review, every key it would write with the item now and after the revert
// (or their checksums with --hashes-only) to a new 0600 file; an existing
// file is refused without --force (exit 2, left as it was), and --plan-out
// with --yes is refused before anything is read. Nothing is written to the
// table.
func TestRevertPlanOut(t *testing.T) {
	fxt := newFixture(t, 0)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	user := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u-1"}, "role": &types.AttributeValueMemberS{Value: "user"}}
	created := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u-2"}, "role": &types.AttributeValueMemberS{Value: "guest"}}
	fx.Put(t, fxt.db, fxt.table, []map[string]types.AttributeValue{user, created})
	admin := with(user, "role", "admin")
	key := func(it map[string]types.AttributeValue) map[string]any {
		return exporttest.Image(t, map[string]types.AttributeValue{"user_id": it["user_id"]})
	}
	spec := fxt.spec(exporttest.Spec{Prefix: "incident/INC-20", ExportID: "01772326800000-p0000001", Incremental: true, From: t0, To: t0.Add(time.Hour),
		Records: [][]exporttest.Record{{
			{Keys: key(user), Old: exporttest.Image(t, admin), New: exporttest.Image(t, user), Micros: t0.UnixMicro() + 1},
			{Keys: key(created), New: exporttest.Image(t, created), Micros: t0.UnixMicro() + 2},
		}}})
	root := t.TempDir()
	_, err := exporttest.Write(root, spec)
	require.NoError(t, err)
	upload(t, fxt, root)
	before := tableState(t, fxt.db, fxt.table)
	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", spec.Prefix, "--table", fxt.table}, unverified...)
	dir := t.TempDir()

	plan := filepath.Join(dir, "plan.jsonl")
	_, errOut, code := fxt.dynops(t, append(args, "--plan-out", plan)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "plan: 2 key(s)")
	entries := fx.ReadPlan(t, plan)
	require.Len(t, entries, 2)
	assert.Equal(t, "put", entries[0].Action, "u-1 is put back to its image at the window's start")
	assert.JSONEq(t, `{"user_id":{"S":"u-1"},"role":{"S":"user"}}`, string(entries[0].Before))
	assert.JSONEq(t, `{"user_id":{"S":"u-1"},"role":{"S":"admin"}}`, string(entries[0].After))
	assert.Equal(t, "delete", entries[1].Action, "u-2 was created in the window")
	assert.JSONEq(t, `{"user_id":{"S":"u-2"},"role":{"S":"guest"}}`, string(entries[1].Before))
	assert.JSONEq(t, `null`, string(entries[1].After))
	assert.Equal(t, before, tableState(t, fxt.db, fxt.table), "a dry run writes nothing to the table")

	t.Run("an existing file is refused without --force, and left as it was", func(t *testing.T) {
		was, err := os.ReadFile(plan)
		require.NoError(t, err)
		out, errOut, code := fxt.dynops(t, append(args, "--plan-out", plan, "--hashes-only")...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, plan)
		assert.Contains(t, errOut, "--force")
		now, err := os.ReadFile(plan)
		require.NoError(t, err)
		assert.Equal(t, was, now)
	})
	t.Run("--hashes-only --force: checksums instead of items", func(t *testing.T) {
		_, errOut, code := fxt.dynops(t, append(args, "--plan-out", plan, "--hashes-only", "--force")...)
		require.Equal(t, 0, code, errOut)
		entries := fx.ReadPlan(t, plan)
		require.Len(t, entries, 2)
		assert.Empty(t, entries[0].Before, "no items with --hashes-only")
		require.NotNil(t, entries[0].BeforeChecksum)
		assert.Equal(t, tablediff.Checksum(user, nil), *entries[0].BeforeChecksum)
		assert.Equal(t, tablediff.Checksum(admin, nil), *entries[0].AfterChecksum)
		assert.Equal(t, "", *entries[1].AfterChecksum, "deleted: no item after")
		b, err := os.ReadFile(plan)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "admin", "no attribute value in the file")
	})
	t.Run("--plan-out with --yes is refused before anything is read", func(t *testing.T) {
		other := filepath.Join(dir, "yes.jsonl")
		out, errOut, code := fxt.dynops(t, append(args, "--plan-out", other, "--yes")...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.True(t, strings.Contains(errOut, "dry run's plan"), errOut)
		assert.NoFileExists(t, other)
		assert.Equal(t, before, tableState(t, fxt.db, fxt.table))
	})
}
