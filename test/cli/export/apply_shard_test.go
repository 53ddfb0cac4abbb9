package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/faults"
	fx "github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// applyChain is a source table's history as two incremental exports
// (t0..t1 under "shard/two", t1..t2 continuing it) and one more window on
// its own ("shard/one", t0..t1 of another prefix) for the kill and
// duplicate cases; targets start as the source did at t0.
type applyChain struct {
	fxt     fixture
	initial []map[string]types.AttributeValue
	want    map[string]string // the source at t2 ("shard/two")
	wantOne map[string]string // the source at t1 ("shard/one")
	t0      time.Time
}

func newApplyChain(t *testing.T) applyChain {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	c := applyChain{fxt: newFixture(t, 0), initial: fx.Users(40), t0: t0}
	root := t.TempDir()
	h := &history{t: t, db: c.fxt.db, table: c.fxt.table, fx: c.fxt, root: root, micros: t0.UnixMicro()}
	fx.Put(t, c.fxt.db, c.fxt.table, c.initial)
	// Window 1: 24 updates, 6 deletes, 8 inserts (every key changed).
	for i := range 24 {
		h.put(with(c.initial[i], "status", "w1"))
	}
	for i := 24; i < 30; i++ {
		h.delete(fx.UserKey(i))
	}
	for _, it := range fx.Users(48)[40:] {
		h.put(it)
	}
	h.window("shard/one", "01777593600000-o0000001", t0, t0.Add(time.Hour), "NEW_AND_OLD_IMAGES")
	// The same window again under shard/two, then window 2: updates of keys
	// of window 1, a re-insert, a delete of an insert.
	for i := range 24 {
		h.put(with(c.initial[i], "status", "w1"))
	}
	for i := 24; i < 30; i++ {
		h.delete(fx.UserKey(i))
	}
	for _, it := range fx.Users(48)[40:] {
		h.put(it)
	}
	h.window("shard/two", "01777593600000-t0000001", t0, t0.Add(time.Hour), "NEW_AND_OLD_IMAGES")
	c.wantOne = tableState(t, c.fxt.db, c.fxt.table)
	for i := 10; i < 20; i++ {
		h.put(with(c.initial[i], "status", "w2"))
	}
	h.put(c.initial[25])
	h.delete(fx.UserKey(41))
	h.window("shard/two", "01777597200000-t0000002", t0.Add(time.Hour), t0.Add(2*time.Hour), "NEW_AND_OLD_IMAGES")
	upload(t, c.fxt, root)
	c.want = tableState(t, c.fxt.db, c.fxt.table)
	return c
}

// target is a new table holding the source as it was at t0.
func (c applyChain) target(t *testing.T, name string) string {
	table := "dev-" + harness.UniqueID() + "-ap-" + name
	fx.Create(t, c.fxt.db, fx.Table{Name: table, HashKey: "user_id"})
	fx.Put(t, c.fxt.db, table, c.initial)
	return table
}

func (c applyChain) args(table, prefix string, extra ...string) []string {
	args := append([]string{"export", "apply", "--bucket", c.fxt.bucket, "--prefix", prefix, "--table", table,
		"--since", c.t0.Format(time.RFC3339), "--source-table", c.fxt.arn, "--max-write-units", "40", "--yes", "-o", "json"}, unverified...)
	return append(args, extra...)
}

func (c applyChain) apply(t *testing.T, table, prefix string, extra ...string) export.ApplyReport {
	t.Helper()
	out, errOut, code := c.fxt.dynops(t, c.args(table, prefix, extra...)...)
	require.Equal(t, 0, code, errOut)
	var rep export.ApplyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

// process is the built binary on the fixture's table, through endpoint.
func (c applyChain) process(t *testing.T, endpoint string, args ...string) *harness.Proc {
	return target.Command(t, args, harness.Via(endpoint), harness.AuditLog(c.fxt.audit))
}

func written(rep export.ApplyReport) (w, unchanged int) {
	for _, r := range rep.Increments {
		w, unchanged = w+r.Written, unchanged+r.Unchanged
	}
	return w, unchanged
}

// dynopsTags are the table's dynops:applied-through* tags.
func dynopsTags(t *testing.T, db *dynamodb.Client, table string) map[string]string {
	t.Helper()
	arn, err := export.TableArn(context.Background(), db, table)
	require.NoError(t, err)
	tags, err := ddbtags.List(context.Background(), db, arn)
	require.NoError(t, err)
	out := map[string]string{}
	for k, v := range tags {
		if strings.HasPrefix(k, export.TagAppliedThrough) {
			out[k] = v
		}
	}
	return out
}

// inShard: is user_id's key of shard i of n (the key hash the commands use)?
func inShard(t *testing.T, id string, i, n int) bool {
	k, err := tablediff.EncodeKey(map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}}, []string{"user_id"})
	require.NoError(t, err)
	return tablediff.KeyShard(k, n) == i
}

// TestApplyShardsEqualOne: two incremental exports applied by one apply and
// by 1, 2 and 4 shards (--shard I/N, run one after the other) end with the
// same table, the source's (read back), with written counts that add up to
// the one apply's; every shard but the last says it waits for the others,
// the last moves dynops:applied-through to the chain's end. Each shard holds 1/N of --max-write-units. An apply as
// another shard count, or without --shard, while shards are in progress is
// refused (exit 2) and changes nothing.
func TestApplyShardsEqualOne(t *testing.T) {
	c := newApplyChain(t)
	end := c.t0.Add(2 * time.Hour).Format(time.RFC3339)
	one := c.target(t, "one")
	whole := c.apply(t, one, "shard/two")
	require.Equal(t, c.want, tableState(t, c.fxt.db, one), "one apply rebuilds the source")
	wantWritten, _ := written(whole)
	assert.Equal(t, 38+12, wantWritten, "every change written once: 38 keys in window 1, 12 in window 2")
	assert.Equal(t, map[string]string{export.TagAppliedThrough: end}, dynopsTags(t, c.fxt.db, one))

	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			table := c.target(t, fmt.Sprint("n", n))
			total := 0
			for i := range n {
				sh := fmt.Sprintf("%d/%d", i, n)
				rep := c.apply(t, table, "shard/two", "--shard", sh)
				w, _ := written(rep)
				total += w
				require.NotNil(t, rep.WriteBudget)
				assert.Equal(t, 40.0/float64(n), rep.WriteBudget.UnitsPerSecond, "1/%d of the run's budget", n)
				if n == 1 {
					continue
				}
				assert.Equal(t, sh, rep.Shard)
				assert.Positive(t, w, "shard %s has keys", sh)
				require.NotNil(t, rep.Shards)
				assert.Equal(t, i == n-1, rep.Shards.Complete, "only the last shard completes the apply")
				if i < n-1 {
					assert.Len(t, rep.Shards.Waiting, n-1-i, "shard %s waits for the shards after it", sh)
					assert.Equal(t, end, dynopsTags(t, c.fxt.db, table)[export.ShardTag(engine.Shard{Index: i, Count: n})], "the shard's own checkpoint")
					assert.NotContains(t, dynopsTags(t, c.fxt.db, table), export.TagAppliedThrough, "not complete: the table's checkpoint does not move")
				}
			}
			assert.Equal(t, wantWritten, total, "the shards write what one apply writes, once")
			assert.Equal(t, c.want, tableState(t, c.fxt.db, table), "%d shards rebuild the source", n)
			want := map[string]string{export.TagAppliedThrough: end}
			for i := range n {
				if n > 1 {
					want[export.ShardTag(engine.Shard{Index: i, Count: n})] = end // they stay, done: the operator removes no tag
				}
			}
			assert.Equal(t, want, dynopsTags(t, c.fxt.db, table), "complete: the table's checkpoint at the end")
		})
	}

	t.Run("another shard count or no shard, while shards are in progress: refused", func(t *testing.T) {
		table := c.target(t, "mix")
		c.apply(t, table, "shard/two", "--shard", "0/2")
		before := tableState(t, c.fxt.db, table)
		tags := dynopsTags(t, c.fxt.db, table)
		for _, extra := range [][]string{{"--shard", "1/4"}, nil} {
			_, errOut, code := c.fxt.dynops(t, c.args(table, "shard/two", extra...)...)
			assert.Equal(t, 2, code, "%v", extra)
			assert.Contains(t, errOut, "is being applied as 2 shards (dynops:applied-through:shard-0-of-2=")
			assert.Contains(t, errOut, "run the remaining shards with --shard I/2")
		}
		assert.Equal(t, before, tableState(t, c.fxt.db, table), "nothing written")
		assert.Equal(t, tags, dynopsTags(t, c.fxt.db, table), "no checkpoint moved")
		_, errOut, code := c.fxt.dynops(t, c.args(table, "shard/two", "--shard", "0/33")...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "an apply takes at most 32 shards")
	})
}

// TestApplyShardKilledOrDuplicatedWritesNothingTwice: one window, two
// shards. Shard 0/2 SIGKILLed at its sixth PutItem and run again writes
// exactly the keys of its shard the killed run had not written (the others
// read as unchanged); shard 1/2 run twice at once writes each of its keys
// once between the two runs. The table ends as the source, its checkpoint
// at the window's end.
func TestApplyShardKilledOrDuplicatedWritesNothingTwice(t *testing.T) {
	c := newApplyChain(t)
	table := c.target(t, "kill")
	keysOf := func(i int) map[string]bool {
		out := map[string]bool{}
		now := map[string]bool{}
		for id := range c.wantOne {
			now[id] = true
		}
		for _, it := range c.initial {
			now[it["user_id"].(*types.AttributeValueMemberS).Value] = true
		}
		for id := range now {
			if inShard(t, id, i, 2) {
				out[id] = true
			}
		}
		return out
	}
	// differing: the keys of shard i not yet as the window leaves them.
	differing := func(i int) int {
		got := tableState(t, c.fxt.db, table)
		n := 0
		for id := range keysOf(i) {
			if got[id] != c.wantOne[id] {
				n++
			}
		}
		return n
	}
	shard0 := differing(0)
	require.Positive(t, shard0)

	var cmd *harness.Proc
	var puts atomic.Int32
	killed := make(chan struct{})
	proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
		if op == "PutItem" && puts.Add(1) == 6 {
			_ = cmd.Cmd.Process.Kill()
			close(killed)
		}
	}})
	require.NoError(t, err)
	defer proxy.Close()
	cmd = c.process(t, proxy.URL, c.args(table, "shard/one", "--shard", "0/2")...)
	var killedOut bytes.Buffer
	cmd.Cmd.Stdout, cmd.Cmd.Stderr = &killedOut, &killedOut
	cmd.Start()
	_ = cmd.Wait()
	t.Logf("the killed shard: %s", killedOut.String())
	select {
	case <-killed:
	default:
		t.Fatalf("shard 0/2 ended before its sixth PutItem (%d)", puts.Load())
	}
	left := differing(0)
	assert.Less(t, left, shard0, "the killed shard wrote some keys")
	assert.Positive(t, left, "and not all of them")
	assert.Empty(t, dynopsTags(t, c.fxt.db, table), "killed before its checkpoint")

	rerun := c.apply(t, table, "shard/one", "--shard", "0/2")
	w, unchanged := written(rerun)
	assert.Equal(t, left, w, "the rerun writes only the keys the killed run had not written")
	assert.Equal(t, shard0-left, unchanged, "the keys it had written read as unchanged")
	assert.Zero(t, differing(0))
	require.NotNil(t, rerun.Shards)
	assert.False(t, rerun.Shards.Complete)
	assert.Equal(t, []string{"1/2"}, rerun.Shards.Waiting)

	shard1 := differing(1)
	require.Positive(t, shard1)
	// Every request slowed (up to 150 ms) so that the two runs overlap:
	// both read a key before either writes it.
	slow, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency}, Seed: 5})
	require.NoError(t, err)
	defer slow.Close()
	a, b := c.process(t, slow.URL, c.args(table, "shard/one", "--shard", "1/2")...), c.process(t, slow.URL, c.args(table, "shard/one", "--shard", "1/2")...)
	var outA, outB, errA, errB bytes.Buffer
	a.Cmd.Stdout, a.Cmd.Stderr, b.Cmd.Stdout, b.Cmd.Stderr = &outA, &errA, &outB, &errB
	a.Start()
	b.Start()
	require.Equal(t, 0, a.Wait(), errA.String())
	require.Equal(t, 0, b.Wait(), errB.String())
	var repA, repB export.ApplyReport
	require.NoError(t, json.Unmarshal(outA.Bytes(), &repA), outA.String())
	require.NoError(t, json.Unmarshal(outB.Bytes(), &repB), outB.String())
	wa, ua := written(repA)
	wb, ub := written(repB)
	t.Logf("duplicates: A wrote %d, %d unchanged; B wrote %d, %d unchanged", wa, ua, wb, ub)
	assert.Equal(t, shard1, wa+wb, "each key of the shard written once between the two runs (%d + %d)", wa, wb)
	assert.Equal(t, c.wantOne, tableState(t, c.fxt.db, table), "the table is the source at the window's end")
	end := c.t0.Add(time.Hour).Format(time.RFC3339)
	assert.Equal(t, map[string]string{export.TagAppliedThrough: end, "dynops:applied-through:shard-0-of-2": end, "dynops:applied-through:shard-1-of-2": end},
		dynopsTags(t, c.fxt.db, table), "complete: the table's checkpoint at the end")
}
