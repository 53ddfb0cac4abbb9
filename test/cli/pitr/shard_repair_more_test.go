package pitr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// shardRepair is TestRepairShardsEqualOne's damage (30 items lost, 10
// changed, 6 extra of 120) on tables of its own, with the keys file of
// their diff.
type shardRepair struct {
	db       *dynamodb.Client
	src, log string
	dir      string
}

func newShardRepair(t *testing.T) shardRepair {
	r := shardRepair{db: dynamodb.NewFromConfig(target.AWSConfig(t)), dir: t.TempDir()}
	r.log = filepath.Join(r.dir, "audit.jsonl")
	r.src = "dev-" + harness.UniqueID() + "-shrep4-src"
	fixture.Create(t, r.db, fixture.Table{Name: r.src, HashKey: "user_id"})
	fixture.Put(t, r.db, r.src, fixture.Users(120))
	return r
}

func (r shardRepair) damaged(t *testing.T, name string) (table, keys string) {
	table = "dev-" + harness.UniqueID() + "-shrep4-" + name
	fixture.Create(t, r.db, fixture.Table{Name: table, HashKey: "user_id"})
	var items []map[string]types.AttributeValue
	for i, it := range fixture.Users(90) {
		if i < 10 {
			it["status"] = &types.AttributeValueMemberS{Value: "damaged"}
		}
		items = append(items, it)
	}
	for i := range 6 {
		items = append(items, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("extra_%d", i)}})
	}
	fixture.Put(t, r.db, table, items)
	keys = filepath.Join(r.dir, name+".keys.jsonl")
	_, errOut, code := target.Dynops(t, r.log, "table", "diff", "--source", r.src, "--target", table, "--keys-out", keys)
	require.Equal(t, 0, code, errOut)
	return table, keys
}

func (r shardRepair) args(to, keys string, extra ...string) []string {
	return append([]string{"pitr", "repair", "--from", r.src, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
		"--unscoped", "test: every difference is damage", "--delete-extra", "--max-write-units", "100", "--yes", "-o", "json"}, extra...)
}

type repairDoc struct {
	Result      repair.Result   `json:"result"`
	WriteBudget capacity.Budget `json:"write_budget"`
}

func parseRepair(t *testing.T, out string) repairDoc {
	t.Helper()
	var d repairDoc
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	return d
}

// process is the built binary through endpoint (a kill needs a process).
func (r shardRepair) process(t *testing.T, endpoint string, args ...string) *harness.Proc {
	return target.Command(t, args, harness.Via(endpoint), harness.AuditLog(r.log))
}

// pending counts the keys of the keys file in shard i of n, and those of
// them whose item in to is not yet the source's (or, for an extra one,
// still there).
func (r shardRepair) pending(t *testing.T, to, keys string, i, n int) (shardKeys, left int) {
	ctx := context.Background()
	get := func(table string, key map[string]types.AttributeValue) string {
		out, err := r.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		if len(out.Item) == 0 {
			return ""
		}
		return tablediff.Checksum(out.Item, nil)
	}
	_, err := tablediff.ReadKeys(keys, func(rec tablediff.KeyRecord) error {
		if tablediff.KeyShard(rec.Key, n) != i {
			return nil
		}
		shardKeys++
		key, err := tablediff.DecodeKey(rec.Key)
		if err != nil {
			return err
		}
		if get(r.src, key) != get(to, key) {
			left++
		}
		return nil
	})
	require.NoError(t, err)
	return shardKeys, left
}

// TestRepairFourShardsKilledOrDuplicated: the damage repaired by four
// shards ends equal to the source with counts adding up to one repair's
// (40 copied, 6 deleted), each shard with a quarter of the budget; shard
// 0/2 SIGKILLed at its fifth write (one worker) and run again writes only
// the keys the killed run had not (the others are already equal); shard
// 1/2 run twice at once (every request slowed so that they overlap) writes
// each key once between the two, with no conflict: each ends exit 0.
func TestRepairFourShardsKilledOrDuplicated(t *testing.T) {
	r := newShardRepair(t)
	t.Run("four shards", func(t *testing.T) {
		table, keys := r.damaged(t, "four")
		var copied, deleted int64
		for i := range 4 {
			out, errOut, code := target.Dynops(t, r.log, r.args(table, keys, "--shard", fmt.Sprintf("%d/4", i))...)
			require.Equal(t, 0, code, errOut)
			d := parseRepair(t, out)
			assert.Equal(t, 25.0, d.WriteBudget.UnitsPerSecond, "a quarter of the run's budget")
			copied, deleted = copied+d.Result.Copied, deleted+d.Result.Deleted
		}
		assert.Equal(t, []int64{40, 6}, []int64{copied, deleted})
		assert.Equal(t, itemsOf(t, r.db, r.src), itemsOf(t, r.db, table), "four shards repair what one does")
	})
	t.Run("killed and run again, duplicated", func(t *testing.T) {
		table, keys := r.damaged(t, "kill")
		shard0, _ := r.pending(t, table, keys, 0, 2)
		var cmd *harness.Proc
		var writes atomic.Int32
		killed := make(chan struct{})
		proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
			if (op == "PutItem" || op == "DeleteItem") && writes.Add(1) == 5 {
				_ = cmd.Cmd.Process.Kill()
				close(killed)
			}
		}})
		require.NoError(t, err)
		defer proxy.Close()
		cmd = r.process(t, proxy.URL, r.args(table, keys, "--shard", "0/2", "--workers", "1")...)
		cmd.Start()
		_ = cmd.Wait()
		select {
		case <-killed:
		default:
			t.Fatalf("shard 0/2 ended before its fifth write (%d)", writes.Load())
		}
		_, left := r.pending(t, table, keys, 0, 2)
		require.Less(t, left, shard0, "the killed shard repaired some keys")
		require.Positive(t, left, "and not all")
		out, errOut, code := target.Dynops(t, r.log, r.args(table, keys, "--shard", "0/2")...)
		require.Equal(t, 0, code, errOut)
		rerun := parseRepair(t, out).Result
		assert.Equal(t, int64(left), rerun.Copied+rerun.Deleted, "the rerun writes only what the killed run had not")
		assert.Equal(t, int64(shard0-left), rerun.AlreadyEqual)
		assert.Zero(t, rerun.Conflicts)

		shard1, _ := r.pending(t, table, keys, 1, 2)
		slow, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency}, Seed: 5})
		require.NoError(t, err)
		defer slow.Close()
		a, b := r.process(t, slow.URL, r.args(table, keys, "--shard", "1/2")...), r.process(t, slow.URL, r.args(table, keys, "--shard", "1/2")...)
		var outA, outB, errA, errB bytes.Buffer
		a.Cmd.Stdout, a.Cmd.Stderr, b.Cmd.Stdout, b.Cmd.Stderr = &outA, &errA, &outB, &errB
		a.Start()
		b.Start()
		assert.Equal(t, 0, a.Wait(), "exit 0: %s", errA.String())
		assert.Equal(t, 0, b.Wait(), "exit 0: %s", errB.String())
		ra, rb := parseRepair(t, outA.String()).Result, parseRepair(t, outB.String()).Result
		t.Logf("duplicates: A %d copied, %d deleted, %d equal, %d conflicts; B %d copied, %d deleted, %d equal, %d conflicts",
			ra.Copied, ra.Deleted, ra.AlreadyEqual, ra.Conflicts, rb.Copied, rb.Deleted, rb.AlreadyEqual, rb.Conflicts)
		assert.Equal(t, int64(shard1), ra.Copied+ra.Deleted+rb.Copied+rb.Deleted, "each key written once between the two")
		assert.Zero(t, ra.Conflicts+rb.Conflicts, "a duplicate's write is no conflict")
		assert.Equal(t, itemsOf(t, r.db, r.src), itemsOf(t, r.db, table))
	})
}
