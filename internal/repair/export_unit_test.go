package repair

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/internal/testctx"
)

// recordingDB is the model recording the keys each BatchGetItem reads and
// the ids each BatchWriteItem puts (with attribute v) or deletes.
type recordingDB struct {
	*modelDB
	mu      sync.Mutex
	gets    []int
	puts    map[string]string // id -> v
	deletes []string
}

func (d *recordingDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	d.mu.Lock()
	for _, ka := range in.RequestItems {
		d.gets = append(d.gets, len(ka.Keys))
	}
	d.mu.Unlock()
	return d.modelDB.BatchGetItem(ctx, in, o...)
}

func (d *recordingDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	d.mu.Lock()
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			if r.PutRequest != nil {
				v, _ := r.PutRequest.Item["v"].(*types.AttributeValueMemberN)
				if v == nil {
					v = &types.AttributeValueMemberN{}
				}
				d.puts[r.PutRequest.Item["id"].(*types.AttributeValueMemberS).Value] = v.Value
			} else {
				d.deletes = append(d.deletes, r.DeleteRequest.Key["id"].(*types.AttributeValueMemberS).Value)
			}
		}
	}
	d.mu.Unlock()
	return d.modelDB.BatchWriteItem(ctx, in, o...)
}

// TestUnconditionalRunFromExport: with FromExport the copies are the
// export's images (no read of a table), keys the export does not hold are
// gone from the source, and the deletes still come from the keys file.
func TestUnconditionalRunFromExport(t *testing.T) {
	var images []exporttest.Record
	for i := range 5 {
		images = append(images, exporttest.Record{New: map[string]any{
			"id": map[string]string{"S": fmt.Sprintf("k%05d", i)}, "v": map[string]string{"N": fmt.Sprint(100 + i)}}})
	}
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: "exp", ExportID: "01772323200000-a1b2c3d4", Records: [][]exporttest.Record{images[:2], images[2:]}})
	require.NoError(t, err)
	export := &exportverify.Export{Store: exportverify.DirStore{Root: root}, Prefix: "exp", URI: root}

	_, recs := modelItems(6) // k00005 is in no export file: gone from the source
	for i := range 2 {
		k, _ := tablediff.EncodeKey(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("extra%d", i)}}, []string{"id"})
		recs = append(recs, tablediff.KeyRecord{Kind: tablediff.OnlyInTarget, Key: k, TargetSum: "x"})
	}
	keys := writeKeys(t, "from", "to", recs)
	ctx := testctx.Bounded(t)
	db := &recordingDB{modelDB: &modelDB{}, puts: map[string]string{}}
	res, err := Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, FromExport: export, Unconditional: true, DeleteExtra: true, Workers: 2})
	require.NoError(t, err)
	assert.Equal(t, [3]int64{5, 2, 1}, [3]int64{res.Copied, res.Deleted, res.GoneFromSource}, "copied, deleted, gone")
	assert.Equal(t, map[string]string{"k00000": "100", "k00001": "101", "k00002": "102", "k00003": "103", "k00004": "104"}, db.puts, "the export's images")
	slices.Sort(db.deletes)
	assert.Equal(t, []string{"extra0", "extra1"}, db.deletes)
	assert.Empty(t, db.gets, "nothing is read from a table")

	_, err = Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, FromExport: &exportverify.Export{
		Store: exportverify.DirStore{Root: t.TempDir()}, Prefix: "exp", URI: "s3://b/exp"}, Unconditional: true, Workers: 2})
	assert.ErrorContains(t, err, "no manifest-summary.json under s3://b/exp")

	other := t.TempDir()
	_, err = exporttest.Write(other, exporttest.Spec{Prefix: "exp", ExportID: "01772323200000-a1b2c3d4", FileItems: []int{3}}) // keyed by user_id
	require.NoError(t, err)
	_, err = Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, FromExport: &exportverify.Export{
		Store: exportverify.DirStore{Root: other}, Prefix: "exp", URI: "s3://b/other"}, Unconditional: true, Workers: 2})
	assert.ErrorContains(t, err, `s3://b/other: item has no key attribute "id"`)

	_, err = Run(ctx, &keyedModel{modelDB: &modelDB{}, keyType: map[string]types.ScalarAttributeType{"from": "S"}},
		Options{From: "from", To: "to", KeysFile: keys, FromExport: export, Unconditional: true, Workers: 2})
	assert.ErrorContains(t, err, "describing to")
}

// TestUnconditionalRunReadsUnitsOf100: without an export each unit is one
// BatchGetItem of up to 100 keys from the restored table.
func TestUnconditionalRunReadsUnitsOf100(t *testing.T) {
	items, recs := modelItems(250)
	keys := writeKeys(t, "from", "to", recs)
	ctx := testctx.Bounded(t)
	db := &recordingDB{modelDB: &modelDB{items: items}, puts: map[string]string{}}
	res, err := Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 3})
	require.NoError(t, err)
	assert.Equal(t, int64(250), res.Copied)
	assert.Len(t, db.puts, 250)
	slices.Sort(db.gets)
	assert.Equal(t, []int{50, 100, 100}, db.gets)
}
