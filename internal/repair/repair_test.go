package repair_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// drill makes a restored table and an original that differ on purpose:
// 3 items deleted from the original, 4 overwritten, 2 added. It returns the
// table names and a keys file of their diff.
func drill(t *testing.T, db *dynamodb.Client) (restored, original, keys string) {
	t.Helper()
	id := harness.UniqueID()
	restored, original = "dev-"+id+"-user-restored", "dev-"+id+"-user"
	users := fixture.Users(60)
	for _, n := range []string{restored, original} {
		fixture.Create(t, db, fixture.Table{Name: n, HashKey: "user_id"})
		fixture.Put(t, db, n, users)
	}
	ctx := context.Background()
	for _, i := range []int{1, 2, 3} {
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &original, Key: fixture.UserKey(i)})
		require.NoError(t, err)
	}
	var corrupt []map[string]types.AttributeValue
	for _, i := range []int{20, 21, 22, 23} {
		it := fixture.Users(24)[i]
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
		it["roles"] = &types.AttributeValueMemberSS{Value: []string{"admin"}}
		corrupt = append(corrupt, it)
	}
	extra := fixture.Users(102)[100:] // user_00100, user_00101
	fixture.Put(t, db, original, append(corrupt, extra...))
	keys = filepath.Join(t.TempDir(), "keys.jsonl")
	rep, err := tablediff.Diff(ctx, db, tablediff.Options{Source: restored, Target: original, KeysOut: keys})
	require.NoError(t, err)
	require.Equal(t, [3]int64{3, 2, 4}, [3]int64{rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})
	return restored, original, keys
}

func diffCounts(t *testing.T, db *dynamodb.Client, a, b string) [3]int64 {
	t.Helper()
	rep, err := tablediff.Diff(context.Background(), db, tablediff.Options{Source: a, Target: b})
	require.NoError(t, err)
	return [3]int64{rep.OnlyInSource, rep.OnlyInTarget, rep.Changed}
}

func TestMakePlanCountsAndChangesNothing(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	restored, original, keys := drill(t, db)
	p, err := repair.MakePlan(repair.Options{From: restored, To: original, KeysFile: keys})
	require.NoError(t, err)
	assert.Equal(t, int64(3), p.Missing)
	assert.Equal(t, int64(4), p.Changed)
	assert.Equal(t, int64(2), p.Extra)
	assert.Equal(t, int64(7), p.Copies())
	assert.Equal(t, "conditional", p.Mode)
	assert.Equal(t, [3]int64{3, 2, 4}, diffCounts(t, db, restored, original), "a plan changes nothing")

	_, err = repair.MakePlan(repair.Options{From: original, To: restored, KeysFile: keys})
	assert.ErrorIs(t, err, repair.ErrKeysFile, "a keys file of another pair of tables is refused")
}

// Items the application wrote after the diff are left alone, as conflicts.
func TestConditionalRepairLeavesLaterWritesAlone_DDB_API_01(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	restored, original, keys := drill(t, db)

	// After the diff, the application writes one missing key and one changed key.
	app := fixture.Users(22)
	app[1]["status"], app[21]["status"] = &types.AttributeValueMemberS{Value: "by-app"}, &types.AttributeValueMemberS{Value: "by-app"}
	fixture.Put(t, db, original, []map[string]types.AttributeValue{app[1], app[21]})

	res, err := repair.Run(testctx.Bounded(t), db, repair.Options{From: restored, To: original, KeysFile: keys, Workers: 3})
	require.NoError(t, err)
	assert.Equal(t, int64(5), res.Copied, "3 missing + 4 changed, less the 2 the application rewrote")
	assert.Equal(t, int64(2), res.Conflicts)
	assert.Equal(t, int64(2), res.KeptExtra, "items only in the original are kept without --delete-extra")
	assert.Equal(t, int64(0), res.Deleted)
	require.Len(t, res.ConflictSample, 2)
	assert.JSONEq(t, `{"user_id":{"S":"user_00001"}}`, string(res.ConflictSample[0].Key))
	assert.Contains(t, res.ConflictSample[0].Reason, "changed in "+original+" since the diff")

	for _, i := range []int{1, 21} {
		assert.Equal(t, &types.AttributeValueMemberS{Value: "by-app"}, fixture.Get(t, db, original, fixture.UserKey(i))["status"], "user %d keeps the application's write", i)
	}
	for _, i := range []int{2, 3, 20, 22, 23} {
		assert.Equal(t, fixture.Get(t, db, restored, fixture.UserKey(i)), fixture.Get(t, db, original, fixture.UserKey(i)), "user %d copied back", i)
	}
	assert.NotNil(t, fixture.Get(t, db, original, fixture.UserKey(100)), "extra item kept")

	t.Run("a second run finds the copied items equal", func(t *testing.T) {
		again, err := repair.Run(testctx.Bounded(t), db, repair.Options{From: restored, To: original, KeysFile: keys})
		require.NoError(t, err)
		assert.Equal(t, int64(0), again.Copied)
		assert.Equal(t, int64(5), again.AlreadyEqual)
		assert.Equal(t, int64(2), again.Conflicts)
	})

	t.Run("--delete-extra after a fresh diff", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "keys.jsonl")
		_, err := tablediff.Diff(ctx, db, tablediff.Options{Source: restored, Target: original, KeysOut: fresh})
		require.NoError(t, err)
		res, err := repair.Run(testctx.Bounded(t), db, repair.Options{From: restored, To: original, KeysFile: fresh, DeleteExtra: true})
		require.NoError(t, err)
		assert.Equal(t, int64(2), res.Deleted)
		assert.Equal(t, int64(2), res.Copied, "the two keys the application wrote are overwritten once a new diff says so")
		assert.Equal(t, [3]int64{0, 0, 0}, diffCounts(t, db, restored, original))
	})
}

// racingDB lets the application write between repair's read and its write:
// the conditional PutItem must then fail and leave the write alone.
type racingDB struct {
	*dynamodb.Client
	race func()
}

func (r racingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r.race()
	return r.Client.PutItem(ctx, in, o...)
}

func TestConditionOnWholeImageCatchesARace(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	restored, original, keys := drill(t, db)
	raced := map[string]bool{}
	rdb := racingDB{Client: db, race: func() {
		// Every write loses the race: the application changes a set inside the item first.
		for _, i := range []int{20, 2} {
			it := fixture.Users(24)[i]
			it["roles"] = &types.AttributeValueMemberSS{Value: []string{"reader", "writer", "app"}}
			fixture.Put(t, db, original, []map[string]types.AttributeValue{it})
			raced[it["user_id"].(*types.AttributeValueMemberS).Value] = true
		}
	}}
	res, err := repair.Run(testctx.Bounded(t), rdb, repair.Options{From: restored, To: original, KeysFile: keys, Workers: 1})
	require.NoError(t, err)
	// user 2 was missing: attribute_not_exists fails; user 20 changed: the image condition fails.
	assert.GreaterOrEqual(t, res.Conflicts, int64(2))
	for _, c := range res.ConflictSample {
		assert.Contains(t, c.Reason, "changed in "+original)
	}
	for _, i := range []int{2, 20} {
		assert.Equal(t, &types.AttributeValueMemberSS{Value: []string{"reader", "writer", "app"}},
			fixture.Get(t, db, original, fixture.UserKey(i))["roles"], "user %d keeps the racing write", i)
	}
}

func TestUnconditionalBatchRepair_DDB_API_02(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	restored, original, keys := drill(t, db)
	var progress int64
	res, err := repair.Run(testctx.Bounded(t), db, repair.Options{From: restored, To: original, KeysFile: keys, Unconditional: true,
		DeleteExtra: true, Progress: func(n int64) { progress = max(progress, n) }})
	require.NoError(t, err)
	assert.Equal(t, "batch", res.Mode)
	assert.Equal(t, int64(7), res.Copied)
	assert.Equal(t, int64(2), res.Deleted)
	assert.Equal(t, int64(9), progress)
	assert.Equal(t, [3]int64{0, 0, 0}, diffCounts(t, db, restored, original))
}

// countingReads is the emulator, noting the most keys one BatchGetItem asked for.
type countingReads struct {
	*dynamodb.Client
	most atomic.Int64
}

func (c *countingReads) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	n := 0
	for _, ka := range in.RequestItems {
		n += len(ka.Keys)
	}
	for m := c.most.Load(); int64(n) > m && !c.most.CompareAndSwap(m, int64(n)); m = c.most.Load() {
	}
	return c.Client.BatchGetItem(ctx, in, o...)
}

// TestUnconditionalRepairPipeline_DDB_API_02: the batch repair's two stages
// (BatchGetItem readers, BatchWriteItem writers) across unit and batch
// boundaries, with one worker and many, extras deleted or kept, and items
// gone from the restored table since the diff: the counts add up to the
// keys file, progress reaches it, and the tables end equal.
func TestUnconditionalRepairPipeline_DDB_API_02(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	for _, tc := range []struct {
		name                    string
		items, missing, changed int
		extra, gone, workers    int
		deleteExtra             bool
	}{
		{name: "one worker, one partial unit", items: 40, missing: 7, changed: 3, extra: 2, workers: 1, deleteExtra: true},
		{name: "units of 100 split into batches of 25", items: 600, missing: 230, changed: 101, extra: 26, workers: 8, deleteExtra: true},
		{name: "extras kept", items: 300, missing: 120, changed: 30, extra: 51, workers: 4},
		{name: "items gone from the restored table", items: 400, missing: 150, changed: 60, extra: 10, gone: 37, workers: 3, deleteExtra: true},
		{name: "more workers than units", items: 50, missing: 26, changed: 0, extra: 0, workers: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := harness.UniqueID()
			restored, original := "dev-"+id+"-user-restored", "dev-"+id+"-user"
			users := fixture.Users(tc.items + tc.extra)
			fixture.Create(t, db, fixture.Table{Name: restored, HashKey: "user_id"})
			fixture.Create(t, db, fixture.Table{Name: original, HashKey: "user_id"})
			fixture.Put(t, db, restored, users[:tc.items])
			// The original lost the first `missing` items, has the next `changed` corrupted, and `extra` more.
			var orig []map[string]types.AttributeValue
			for i, it := range users {
				switch {
				case i < tc.missing:
					continue
				case i < tc.missing+tc.changed:
					c := map[string]types.AttributeValue{}
					for k, v := range it {
						c[k] = v
					}
					c["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
					it = c
				}
				orig = append(orig, it)
			}
			fixture.Put(t, db, original, orig)
			keys := filepath.Join(t.TempDir(), "keys.jsonl")
			rep, err := tablediff.Diff(ctx, db, tablediff.Options{Source: restored, Target: original, KeysOut: keys})
			require.NoError(t, err)
			require.Equal(t, [3]int64{int64(tc.missing), int64(tc.extra), int64(tc.changed)}, [3]int64{rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})
			// Items gone from the restored table since the diff: the first `gone` missing ones.
			for i := 0; i < tc.gone; i++ {
				_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &restored, Key: fixture.UserKey(i)})
				require.NoError(t, err)
			}
			var progress atomic.Int64
			reads := &countingReads{Client: db}
			res, err := repair.Run(testctx.Bounded(t), reads, repair.Options{From: restored, To: original, KeysFile: keys, Unconditional: true,
				DeleteExtra: tc.deleteExtra, Workers: tc.workers, Progress: func(n int64) {
					for p := progress.Load(); n > p && !progress.CompareAndSwap(p, n); p = progress.Load() {
					}
				}})
			require.NoError(t, err)
			copies := int64(tc.missing + tc.changed - tc.gone)
			assert.Equal(t, copies, res.Copied, "copied")
			assert.Equal(t, int64(tc.gone), res.GoneFromSource, "gone from the source")
			if tc.deleteExtra {
				assert.Equal(t, [2]int64{int64(tc.extra), 0}, [2]int64{res.Deleted, res.KeptExtra}, "deleted, kept")
			} else {
				assert.Equal(t, [2]int64{0, int64(tc.extra)}, [2]int64{res.Deleted, res.KeptExtra}, "deleted, kept")
			}
			assert.Equal(t, int64(tc.missing+tc.changed+tc.extra), progress.Load(), "progress ends at every key of the file")
			assert.Equal(t, min(100, tc.missing+tc.changed), int(reads.most.Load()), "one BatchGetItem reads up to 100 keys (a unit)")
			require.Greater(t, res.Seconds, 0.0)
			assert.InDelta(t, float64(res.Copied+res.Deleted)/res.Seconds, res.ItemsPerSec, 1e-9, "items written per second")
			// Gone items are in neither table now; kept extras stay only in the original.
			want := [3]int64{0, 0, 0}
			if !tc.deleteExtra {
				want[1] = int64(tc.extra)
			}
			assert.Equal(t, want, diffCounts(t, db, restored, original), "only in restored, only in original, changed after the repair")
		})
	}
}
