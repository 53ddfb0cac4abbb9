package tablediff

import (
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// writeExport writes a full export in AWS's format (exporttest) whose data
// files hold the generated items u-FILE-I (key user_id S) and returns it.
func writeExport(t *testing.T, files ...int) *exportverify.Export {
	t.Helper()
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: "exports/t", ExportID: "01772323200000-a1b2c3d4", FileItems: files})
	require.NoError(t, err)
	return &exportverify.Export{Store: exportverify.DirStore{Root: root}, Prefix: "exports/t", URI: root}
}

// TestDiffOfTwoExports: both sides read from exports (no table read); the
// key comes from --key; progress is reported every 1,000 items of a side
// and once at its end.
func TestDiffOfTwoExports(t *testing.T) {
	src, dst := writeExport(t, 1200, 1300), writeExport(t, 2500) // u-0-0..1199 and u-1-0..1299; u-0-0..2499
	var mu sync.Mutex
	calls := 0
	var most [2]int64
	rep, err := diffWithin(t, &fakeTables{}, Options{Source: "a", Target: "b", SourceExport: src, TargetExport: dst,
		KeyNames: []string{"user_id"}, Progress: func(s, d int64) {
			mu.Lock()
			calls++
			most = [2]int64{max(most[0], s), max(most[1], d)}
			mu.Unlock()
		}})
	require.NoError(t, err)
	assert.Equal(t, [5]int64{2500, 2500, 1200, 1300, 1300},
		[5]int64{rep.SourceItems, rep.TargetItems, rep.Same, rep.OnlyInSource, rep.OnlyInTarget})
	assert.Zero(t, rep.Changed)
	assert.Equal(t, 16, rep.Buckets)
	assert.Equal(t, 2*(2+1), calls, "a call at 1,000 and 2,000 items of each side, and one at its end")
	assert.Equal(t, [2]int64{2500, 2500}, most)

	_, err = diffWithin(t, &fakeTables{}, Options{Source: "a", Target: "b", SourceExport: src, TargetExport: dst})
	assert.ErrorContains(t, err, "both sides are exports, which do not record the table's key: give it with --key")
	_, err = diffWithin(t, &fakeTables{}, Options{Source: "a", Target: "b", SourceExport: src, TargetExport: dst, KeyNames: []string{"id"}})
	assert.ErrorContains(t, err, `item has no key attribute "id"`)
	_, err = diffWithin(t, &fakeTables{}, Options{Source: "a", Target: "b", SourceExport: writeExport(t, 3), TargetExport: &exportverify.Export{
		Store: exportverify.DirStore{Root: t.TempDir()}, Prefix: "exports/t", URI: "s3://bucket/exports/t"}, KeyNames: []string{"user_id"}})
	assert.ErrorContains(t, err, "no manifest-summary.json under s3://bucket/exports/t")
}

// TestDiffOfAnExportAndATable: the table side gives the key (and --key must
// match it) and its ItemCount sizes the buckets with the export's itemCount.
func TestDiffOfAnExportAndATable(t *testing.T) {
	src := writeExport(t, 30, 20)
	var ids []map[string]types.AttributeValue
	for i := range 10 {
		ids = append(ids, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("u-0-%d", i)}})
	}
	ids = append(ids, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "only-in-table"}})
	db := &fakeTables{pageSize: 7, tables: map[string]fakeTable{"b": {keys: [][2]string{{"user_id", "S"}}, itemCount: 9_000_000, items: ids}}}
	for _, key := range [][]string{nil, {"user_id"}} {
		rep, err := diffWithin(t, db, Options{Source: "a", Target: "b", SourceExport: src, KeyNames: key})
		require.NoError(t, err, "--key %v", key)
		assert.Equal(t, [5]int64{50, 11, 40, 1, 10}, [5]int64{rep.SourceItems, rep.TargetItems, rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})
		assert.Equal(t, []string{"user_id"}, rep.KeyNames)
		assert.Equal(t, 36, rep.Buckets, "sized from the larger count: the table's 9,000,000")
	}
	_, err := diffWithin(t, db, Options{Source: "a", Target: "b", SourceExport: src, KeyNames: []string{"id"}})
	assert.ErrorContains(t, err, "--key [id], but b has key [user_id]: give the table's key or leave --key out")
	_, err = diffWithin(t, db, Options{Source: "a", Target: "nope", SourceExport: src})
	assert.ErrorContains(t, err, "describing nope")
}
