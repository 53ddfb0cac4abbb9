package migrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/fixture"
)

// TestVerifyShardsCombineIntoOne: after a backfill, one destination item
// changed by hand. `migrate verify` as one process and as 1, 2 and 4
// shards (--shard I/N), their -o json results combined with --combine,
// give the same verdict (exit 1), counts and samples; the difference is
// found by exactly one shard of each run. Combining a run with a shard
// missing or given twice is refused (exit 2).
func TestVerifyShardsCombineIntoOne(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 120)
	dir := t.TempDir()
	state, auditLog := filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return target.Dynops(t, auditLog, append([]string{"migrate", args[0], "--source", source, "--routes", routesFile(), "--state", state}, args[1:]...)...)
	}
	_, errOut, code := run("backfill", "--allow-unmatched")
	require.Equal(t, 0, code, errOut)
	out, _, code := run("verify", "-o", "json")
	require.Equal(t, 0, code, out)

	users := "dev-" + product + "-users"
	items := scanAll(t, d.db, users)
	require.NotEmpty(t, items)
	changed := items[len(items)/2]
	changed["note"] = &types.AttributeValueMemberS{Value: "changed by hand"}
	fixture.Put(t, d.db, users, []map[string]types.AttributeValue{changed})

	parse := func(out string) migrate.VerifyResult {
		t.Helper()
		var v migrate.VerifyResult
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		return v
	}
	out, _, code = run("verify", "-o", "json")
	require.Equal(t, 1, code, "one process: a difference")
	one := parse(out)
	require.EqualValues(t, 1, one.Changed)
	require.EqualValues(t, 1, one.Differences())

	same := func(t *testing.T, want, got migrate.VerifyResult) {
		t.Helper()
		assert.Equal(t, []int64{want.SourceItems, want.TargetItems, want.Same, want.OnlyInSource, want.OnlyInTarget, want.Changed, want.Unmatched, want.Untransformable},
			[]int64{got.SourceItems, got.TargetItems, got.Same, got.OnlyInSource, got.OnlyInTarget, got.Changed, got.Unmatched, got.Untransformable})
		assert.Equal(t, want.Sample, got.Sample)
		assert.Equal(t, want.Buckets, got.Buckets)
		assert.Empty(t, got.Shard)
	}
	files := map[int][]string{}
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			var combine []string
			var last migrate.VerifyResult
			withDiff := 0
			for i := range n {
				sh := fmt.Sprintf("%d/%d", i, n)
				out, _, code := run("verify", "--shard", sh, "-o", "json")
				part := parse(out)
				last = part
				if n > 1 {
					assert.Equal(t, sh, part.Shard)
				}
				assert.Equal(t, part.Differences() > 0, code == 1, "shard %s exits 1 only on its own differences", sh)
				if part.Differences() > 0 {
					withDiff++
				}
				path := filepath.Join(dir, fmt.Sprintf("verify-%d-of-%d.json", i, n))
				require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
				combine = append(combine, "--combine", path)
			}
			files[n] = combine
			if n == 1 {
				same(t, one, last) // one shard is the whole verify
				return
			}
			assert.Equal(t, 1, withDiff, "the one difference is found by exactly one shard")
			out, _, code := run(append([]string{"verify", "-o", "json"}, combine...)...)
			assert.Equal(t, 1, code, "the combined verdict: a difference")
			same(t, one, parse(out))
		})
	}
	t.Run("a shard missing or given twice: refused", func(t *testing.T) {
		four := files[4]
		_, errOut, code := run(append([]string{"verify"}, four[:6]...)...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "shard(s) 3/4 of 4 missing")
		_, errOut, code = run(append(append([]string{"verify"}, four...), four[0], four[1])...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "shard 0/4 is given twice")
		_, errOut, code = run(append(append([]string{"verify"}, four[:6]...), files[2][:2]...)...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "is of 2 shards")
	})
	t.Run("many differences: the samples merge in the one verify's order", func(t *testing.T) {
		for _, it := range items {
			it["note"] = &types.AttributeValueMemberS{Value: "changed again"}
		}
		fixture.Put(t, d.db, users, items)
		out, _, code := run("verify", "--sample", "3", "-o", "json")
		require.Equal(t, 1, code)
		want := parse(out)
		require.Greater(t, want.Changed, int64(3))
		var combine []string
		withDiff := 0
		for i := range 4 {
			out, _, _ := run("verify", "--shard", fmt.Sprintf("%d/4", i), "--sample", "3", "-o", "json")
			if parse(out).Differences() > 0 {
				withDiff++
			}
			path := filepath.Join(dir, fmt.Sprintf("many-%d.json", i))
			require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
			combine = append(combine, "--combine", path)
		}
		assert.Greater(t, withDiff, 1, "the differences fall in several shards")
		out, _, code = run(append([]string{"verify", "--sample", "3", "-o", "json"}, combine...)...)
		assert.Equal(t, 1, code)
		same(t, want, parse(out))
	})
}
