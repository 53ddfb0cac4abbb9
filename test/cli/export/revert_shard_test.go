package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dynops/dynops/test/helpers/harness"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/test/helpers/faults"
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

// badWindow is TestRevertShardsEqualOne's window on a table of its own:
// eight updates, three deletes and four inserts of users, exported; it
// returns the table's state at the window's start and the 15 user IDs the
// window changed.
func badWindow(t *testing.T) (fixture, map[string]string, []string) {
	t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	fxt := newFixture(t, 0)
	root := t.TempDir()
	h := &history{t: t, db: fxt.db, table: fxt.table, fx: fxt, root: root, micros: t0.UnixMicro()}
	users := fx.Users(24)
	fx.Put(t, fxt.db, fxt.table, users[:20])
	atStart := tableState(t, fxt.db, fxt.table)
	var ids []string
	for i := range 8 {
		h.put(with(users[i], "status", "bad"))
	}
	for i := 8; i < 11; i++ {
		h.delete(fx.UserKey(i))
	}
	for _, it := range users[20:] {
		h.put(it)
	}
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 21, 22, 23} {
		ids = append(ids, users[i]["user_id"].(*types.AttributeValueMemberS).Value)
	}
	h.window("incident/INC-9/incremental", "01775001600000-s0000001", t0, t0.Add(time.Hour), "NEW_AND_OLD_IMAGES")
	upload(t, fxt, root)
	return fxt, atStart, ids
}

func revertArgs(fxt fixture, extra ...string) []string {
	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-9/incremental", "--table", fxt.table,
		"--max-write-units", "40", "--yes", "-o", "json"}, unverified...)
	return append(args, extra...)
}

// notBack counts the ids of shard i of n whose item is not yet as it was at
// the window's start.
func notBack(t *testing.T, fxt fixture, atStart map[string]string, ids []string, i, n int) (shardKeys, left int) {
	now := tableState(t, fxt.db, fxt.table)
	for _, id := range ids {
		if inShard(t, id, i, n) {
			shardKeys++
			if now[id] != atStart[id] {
				left++
			}
		}
	}
	return shardKeys, left
}

// TestRevertFourShardsKilledOrDuplicated: the bad window reverted by four
// shards ends as at its start with counts adding up to the 15 keys; shard
// 0/2 SIGKILLed at its third write (one worker) and run again writes only
// the keys the killed run had not (the others count as already reverted);
// shard 1/2 run twice at once writes each of its keys once between the two
// runs, with no conflict: each ends exit 0.
func TestRevertFourShardsKilledOrDuplicated(t *testing.T) {
	t.Run("four shards", func(t *testing.T) {
		fxt, atStart, _ := badWindow(t)
		var keys, writes int64
		for i := range 4 {
			out, errOut, code := fxt.dynops(t, revertArgs(fxt, "--shard", fmt.Sprintf("%d/4", i))...)
			require.Equal(t, 0, code, errOut)
			var rep export.RevertReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			require.NotNil(t, rep.WriteBudget)
			assert.Equal(t, 10.0, rep.WriteBudget.UnitsPerSecond, "a quarter of the run's budget")
			keys, writes = keys+rep.Keys, writes+rep.Restores+rep.Deletes
		}
		assert.Equal(t, []int64{15, 15}, []int64{keys, writes})
		assert.Equal(t, atStart, tableState(t, fxt.db, fxt.table), "four shards revert what one does")
	})
	t.Run("killed and run again, duplicated", func(t *testing.T) {
		fxt, atStart, ids := badWindow(t)
		c := applyChain{fxt: fxt}
		shard0, _ := notBack(t, fxt, atStart, ids, 0, 2)
		var cmd *harness.Proc
		var writes atomic.Int32
		killed := make(chan struct{})
		proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
			if (op == "PutItem" || op == "DeleteItem") && writes.Add(1) == 3 {
				_ = cmd.Cmd.Process.Kill()
				close(killed)
			}
		}})
		require.NoError(t, err)
		defer proxy.Close()
		cmd = c.process(t, proxy.URL, revertArgs(fxt, "--shard", "0/2", "--workers", "1")...)
		cmd.Start()
		_ = cmd.Wait()
		select {
		case <-killed:
		default:
			t.Fatalf("shard 0/2 ended before its third write (%d)", writes.Load())
		}
		_, left := notBack(t, fxt, atStart, ids, 0, 2)
		require.Less(t, left, shard0, "the killed shard reverted some keys")
		require.Positive(t, left, "and not all")
		out, errOut, code := fxt.dynops(t, revertArgs(fxt, "--shard", "0/2")...)
		require.Equal(t, 0, code, errOut)
		var rerun export.RevertReport
		require.NoError(t, json.Unmarshal([]byte(out), &rerun), out)
		assert.Equal(t, int64(left), rerun.Restores+rerun.Deletes, "the rerun writes only what the killed run had not")
		assert.Equal(t, int64(shard0-left), rerun.AlreadyReverted)
		assert.Zero(t, rerun.Conflicts)

		shard1, _ := notBack(t, fxt, atStart, ids, 1, 2)
		// Every request slowed (up to 150 ms) so that the two runs overlap:
		// both read a key before either writes it.
		slow, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency}, Seed: 5})
		require.NoError(t, err)
		defer slow.Close()
		a, b := c.process(t, slow.URL, revertArgs(fxt, "--shard", "1/2")...), c.process(t, slow.URL, revertArgs(fxt, "--shard", "1/2")...)
		var outA, outB, errA, errB bytes.Buffer
		a.Cmd.Stdout, a.Cmd.Stderr, b.Cmd.Stdout, b.Cmd.Stderr = &outA, &errA, &outB, &errB
		a.Start()
		b.Start()
		assert.Equal(t, 0, a.Wait(), "exit 0: %s", errA.String())
		assert.Equal(t, 0, b.Wait(), "exit 0: %s", errB.String())
		var repA, repB export.RevertReport
		require.NoError(t, json.Unmarshal(outA.Bytes(), &repA), outA.String())
		require.NoError(t, json.Unmarshal(outB.Bytes(), &repB), outB.String())
		t.Logf("duplicates: A %d restores, %d deletes, %d already; B %d restores, %d deletes, %d already", repA.Restores, repA.Deletes, repA.AlreadyReverted, repB.Restores, repB.Deletes, repB.AlreadyReverted)
		assert.Equal(t, int64(shard1), repA.Restores+repA.Deletes+repB.Restores+repB.Deletes, "each key written once between the two")
		assert.Zero(t, repA.Conflicts+repB.Conflicts, "a duplicate's write is no conflict")
		assert.Equal(t, atStart, tableState(t, fxt.db, fxt.table))
	})
}
