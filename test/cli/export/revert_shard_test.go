package export

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	fx "github.com/dynops/dynops/test/helpers/fixture"
)

// TestRevertShardsEqualOne: the same bad window (eight updates, three
// deletes, four inserts) on two tables, reverted from its incremental
// export by one revert and by `--shard 0/2` + `--shard 1/2`: both tables
// end as at the window's start (read back), the shards' counts add up to
// the one revert's with neither shard empty, and each shard holds half the
// run's --max-write-units (in the JSON and the audit record).
func TestRevertShardsEqualOne(t *testing.T) {
	t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	window := func(t *testing.T) (fixture, map[string]string) {
		fxt := newFixture(t, 0)
		root := t.TempDir()
		h := &history{t: t, db: fxt.db, table: fxt.table, fx: fxt, root: root, micros: t0.UnixMicro()}
		users := fx.Users(20)
		fx.Put(t, fxt.db, fxt.table, users)
		atStart := tableState(t, fxt.db, fxt.table)
		for i := range 8 {
			h.put(with(users[i], "status", "bad"))
		}
		for i := 8; i < 11; i++ {
			h.delete(fx.UserKey(i))
		}
		for _, it := range fx.Users(24)[20:] {
			h.put(it)
		}
		h.window("incident/INC-9/incremental", "01775001600000-s0000001", t0, t0.Add(time.Hour), "NEW_AND_OLD_IMAGES")
		upload(t, fxt, root)
		return fxt, atStart
	}
	revert := func(t *testing.T, fxt fixture, extra ...string) export.RevertReport {
		args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-9/incremental", "--table", fxt.table,
			"--max-write-units", "40", "--yes", "-o", "json"}, unverified...)
		out, errOut, code := fxt.dynops(t, append(args, extra...)...)
		require.Equal(t, 0, code, errOut)
		var rep export.RevertReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		return rep
	}
	oneFx, oneStart := window(t)
	one := revert(t, oneFx)
	assert.Equal(t, int64(15), one.Keys)
	assert.Equal(t, int64(11), one.Restores)
	assert.Equal(t, int64(4), one.Deletes)
	assert.Equal(t, oneStart, tableState(t, oneFx.db, oneFx.table))

	twoFx, twoStart := window(t)
	var keys, restores, deletes int64
	for i := range 2 {
		sh := fmt.Sprintf("%d/2", i)
		rep := revert(t, twoFx, "--shard", sh)
		assert.Equal(t, sh, rep.Shard)
		assert.Positive(t, rep.Keys, "shard %s has keys", sh)
		assert.Less(t, rep.Keys, one.Keys, "shard %s has only its keys", sh)
		require.NotNil(t, rep.WriteBudget)
		assert.Equal(t, 20.0, rep.WriteBudget.UnitsPerSecond, "half the run's budget")
		assert.Contains(t, fmt.Sprint(lastRecord(t, twoFx.audit).Actions), "split evenly across 2 shards", "the shard's budget is audited")
		keys, restores, deletes = keys+rep.Keys, restores+rep.Restores, deletes+rep.Deletes
	}
	assert.Equal(t, []int64{one.Keys, one.Restores, one.Deletes}, []int64{keys, restores, deletes})
	assert.Equal(t, twoStart, tableState(t, twoFx.db, twoFx.table), "two shards revert what one does")
}
