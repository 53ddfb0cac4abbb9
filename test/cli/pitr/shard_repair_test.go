package pitr

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRepairShardsEqualOne: the same damage on two copies of a table (30
// items lost, 10 changed, 6 extra); one repair of its keys file on the
// first copy, `--shard 0/2` and `--shard 1/2` on the second: both copies
// end equal to the source (read back), the shards' counts add up to the
// one repair's with neither shard empty, and each shard holds half the
// run's --max-write-units (printed, in the JSON and in the audit).
func TestRepairShardsEqualOne(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	users := fixture.Users(120)
	src := "dev-" + harness.UniqueID() + "-shrep-src"
	fixture.Create(t, db, fixture.Table{Name: src, HashKey: "user_id"})
	fixture.Put(t, db, src, users)
	damaged := func(name string) (table, keys string) {
		table = "dev-" + harness.UniqueID() + "-shrep-" + name
		fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id"})
		var items []map[string]types.AttributeValue
		for i, it := range users[:90] {
			m := map[string]types.AttributeValue{}
			for k, v := range it {
				m[k] = v
			}
			if i < 10 {
				m["status"] = &types.AttributeValueMemberS{Value: "damaged"}
			}
			items = append(items, m)
		}
		for i := range 6 {
			items = append(items, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("extra_%d", i)}})
		}
		fixture.Put(t, db, table, items)
		keys = filepath.Join(dir, name+".keys.jsonl")
		_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", src, "--target", table, "--keys-out", keys)
		require.Equal(t, 0, code, errOut)
		return table, keys
	}
	one, keysOne := damaged("one")
	two, keysTwo := damaged("two")
	type doc struct {
		Result      repair.Result   `json:"result"`
		WriteBudget capacity.Budget `json:"write_budget"`
	}
	repairRun := func(to, keys string, extra ...string) doc {
		args := append([]string{"pitr", "repair", "--from", src, "--to", to, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
			"--unscoped", "test: every difference is damage", "--delete-extra", "--max-write-units", "100", "--yes", "-o", "json"}, extra...)
		out, errOut, code := target.Dynops(t, log, args...)
		require.Equal(t, 0, code, errOut)
		var d doc
		require.NoError(t, json.Unmarshal([]byte(out), &d), out)
		return d
	}
	whole := repairRun(one, keysOne)
	assert.Equal(t, int64(40), whole.Result.Copied)
	assert.Equal(t, int64(6), whole.Result.Deleted)
	assert.Equal(t, 100.0, whole.WriteBudget.UnitsPerSecond)

	var copied, deleted int64
	for i := range 2 {
		sh := fmt.Sprintf("%d/2", i)
		d := repairRun(two, keysTwo, "--shard", sh)
		assert.Equal(t, sh, d.Result.Shard)
		assert.Positive(t, d.Result.Copied, "shard %s has keys", sh)
		assert.Less(t, d.Result.Copied, whole.Result.Copied, "shard %s has only its keys", sh)
		assert.Equal(t, 50.0, d.WriteBudget.UnitsPerSecond, "half the run's budget")
		assert.Contains(t, d.WriteBudget.Source, "split evenly across 2 shards")
		assert.Contains(t, fmt.Sprint(lastRecord(t, log).Actions), "split evenly across 2 shards", "the shard's budget is audited")
		copied += d.Result.Copied
		deleted += d.Result.Deleted
	}
	assert.Equal(t, whole.Result.Copied, copied)
	assert.Equal(t, whole.Result.Deleted, deleted)
	want := itemsOf(t, db, src)
	assert.Equal(t, want, itemsOf(t, db, one), "one repair")
	assert.Equal(t, want, itemsOf(t, db, two), "two shards")

	_, errOut, code := target.Dynops(t, log, "pitr", "repair", "--from", src, "--to", two, "--all-differences", "--shard", "0/2")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--shard 0/2 needs --keys FILE")
}
