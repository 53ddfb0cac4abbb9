package repair

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/internal/testctx"
)

// writeKeys writes a keys file of a diff from -> to (key "id") with the
// given records: what `dynops table diff --keys-out` writes.
func writeKeys(t testing.TB, from, to string, recs []tablediff.KeyRecord) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	if err := enc.Encode(map[string]any{"diff": tablediff.Header{Source: from, Target: to, KeyNames: []string{"id"}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// modelItems is n items k00000... of the model, with their keys-file records (only in the source).
func modelItems(n int) (map[string]map[string]types.AttributeValue, []tablediff.KeyRecord) {
	items := map[string]map[string]types.AttributeValue{}
	var recs []tablediff.KeyRecord
	for i := range n {
		id := fmt.Sprintf("k%05d", i)
		it := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}, "v": &types.AttributeValueMemberN{Value: "1"}}
		items[id] = it
		k, _ := tablediff.EncodeKey(it, []string{"id"})
		recs = append(recs, tablediff.KeyRecord{Kind: tablediff.OnlyInSource, Key: k, SourceSum: "x"})
	}
	return items, recs
}

// throttledReads is the model leaving the last key of each BatchGetItem
// unprocessed for the first `times` calls (DDB-API-02).
type throttledReads struct {
	*modelDB
	times int
	mu    sync.Mutex
	calls int
}

func (r *throttledReads) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.mu.Lock()
	r.calls++
	throttle := r.calls <= r.times
	r.mu.Unlock()
	if !throttle {
		return r.modelDB.BatchGetItem(ctx, in, o...)
	}
	left := map[string]types.KeysAndAttributes{}
	read := map[string]types.KeysAndAttributes{}
	for t, ka := range in.RequestItems {
		last := len(ka.Keys) - 1
		read[t] = types.KeysAndAttributes{Keys: ka.Keys[:last], ConsistentRead: ka.ConsistentRead}
		left[t] = types.KeysAndAttributes{Keys: ka.Keys[last:], ConsistentRead: ka.ConsistentRead}
	}
	out, err := r.modelDB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: read}, o...)
	if err != nil {
		return nil, err
	}
	out.UnprocessedKeys = left
	return out, nil
}

// TestRunBackoff: a repair without a Backoff retries unprocessed keys with
// DefaultBackoff; one with a Backoff keeps it (here: give up after 1 attempt).
func TestRunBackoff(t *testing.T) {
	items, recs := modelItems(5)
	keys := writeKeys(t, "from", "to", recs)
	ctx := testctx.Bounded(t)

	db := &throttledReads{modelDB: &modelDB{items: items}, times: 1}
	res, err := Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 1})
	require.NoError(t, err, "the default backoff retries the unprocessed key")
	assert.Equal(t, int64(5), res.Copied)
	assert.Equal(t, 2, db.calls)

	db = &throttledReads{modelDB: &modelDB{items: items}, times: 100}
	_, err = Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 1,
		Backoff: Backoff{Attempts: 1, Base: time.Millisecond, Max: time.Millisecond}})
	assert.ErrorContains(t, err, "1 key(s) still unprocessed after 1 attempts", "the Backoff given is used")
	assert.Equal(t, 1, db.calls)
}

// keyedModel is the model with a key type per table and a count of the writes.
type keyedModel struct {
	*modelDB
	keyType map[string]types.ScalarAttributeType // absent: no such table
	writes  int
}

func (m *keyedModel) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	typ, ok := m.keyType[*in.TableName]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: in.TableName}
	}
	out, err := m.modelDB.DescribeTable(ctx, in, o...)
	if err == nil {
		out.Table.AttributeDefinitions[0].AttributeType = typ
	}
	return out, err
}

// BatchGetItem leaves out items that do not exist, as DynamoDB does.
func (m *keyedModel) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := m.modelDB.BatchGetItem(ctx, in, o...)
	if err != nil {
		return nil, err
	}
	for t, items := range out.Responses {
		out.Responses[t] = slices.DeleteFunc(items, func(it map[string]types.AttributeValue) bool { return it == nil })
	}
	return out, nil
}

func (m *keyedModel) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	m.writes++
	return m.modelDB.BatchWriteItem(ctx, in, o...)
}

// TestRunChecksBothTables: without an export, both tables must exist and
// share the key (tablediff.SameKey), not only the target; nothing is written
// otherwise.
func TestRunChecksBothTables(t *testing.T) {
	items, recs := modelItems(3)
	keys := writeKeys(t, "from", "to", recs)
	for _, tc := range []struct {
		name    string
		keyType map[string]types.ScalarAttributeType
		want    string
	}{
		{"other key type", map[string]types.ScalarAttributeType{"from": "N", "to": "S"}, "only tables with the same primary key"},
		{"no source table", map[string]types.ScalarAttributeType{"to": "S"}, "describing from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &keyedModel{modelDB: &modelDB{items: items}, keyType: tc.keyType}
			_, err := Run(context.Background(), db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 1})
			assert.ErrorContains(t, err, tc.want)
			assert.Zero(t, db.writes)
		})
	}
	db := &keyedModel{modelDB: &modelDB{items: items}, keyType: map[string]types.ScalarAttributeType{"from": "S", "to": "S"}}
	res, err := Run(context.Background(), db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 1})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{3, 0}, [2]int64{res.Copied, res.GoneFromSource})

	delete(items, "k00001") // gone from the restored table since the diff
	var mu sync.Mutex
	var progress int64
	res, err = Run(context.Background(), db, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, Workers: 1,
		Progress: func(n int64) { mu.Lock(); progress = max(progress, n); mu.Unlock() }})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{2, 1}, [2]int64{res.Copied, res.GoneFromSource}, "copied, gone from the source")
	assert.Equal(t, int64(3), progress, "a gone key is handled too")
}

// TestFeedSplitsCopiesFromDeletes: the keys file's deletes (only in the
// target) go to the workers; with keep set (the export path), every copy
// (only in the source, changed) goes to keep and none to the workers, and
// without keep the copies go to the workers in units of their own.
func TestFeedSplitsCopiesFromDeletes(t *testing.T) {
	kinds := []tablediff.Kind{tablediff.OnlyInSource, tablediff.OnlyInTarget, tablediff.Changed, tablediff.OnlyInTarget, tablediff.OnlyInSource}
	var recs []tablediff.KeyRecord
	for i, k := range kinds {
		key, _ := tablediff.EncodeKey(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("k%d", i)}}, []string{"id"})
		recs = append(recs, tablediff.KeyRecord{Kind: k, Key: key})
	}
	keys := writeKeys(t, "src", "dst", recs)
	collect := func(keep func(tablediff.KeyRecord)) [][]tablediff.Kind {
		work := make(chan unit, len(recs))
		if err := feed(context.Background(), keys, engine.Shard{}, 10, work, keep, nil); err != nil {
			t.Fatalf("feed: %v", err)
		}
		close(work)
		var units [][]tablediff.Kind
		for u := range work {
			var ks []tablediff.Kind
			for _, r := range u.recs {
				ks = append(ks, r.Kind)
			}
			units = append(units, ks)
		}
		return units
	}
	var kept []tablediff.Kind
	units := collect(func(r tablediff.KeyRecord) { kept = append(kept, r.Kind) })
	if want := [][]tablediff.Kind{{tablediff.OnlyInTarget, tablediff.OnlyInTarget}}; !reflect.DeepEqual(units, want) {
		t.Errorf("with keep, the workers got %v, want only the deletes %v", units, want)
	}
	if want := []tablediff.Kind{tablediff.OnlyInSource, tablediff.Changed, tablediff.OnlyInSource}; !reflect.DeepEqual(kept, want) {
		t.Errorf("keep got %v, want the copies %v", kept, want)
	}
	units = collect(nil)
	sort.Slice(units, func(i, j int) bool { return units[i][0] < units[j][0] })
	want := [][]tablediff.Kind{{tablediff.OnlyInSource, tablediff.Changed, tablediff.OnlyInSource}, {tablediff.OnlyInTarget, tablediff.OnlyInTarget}}
	if !reflect.DeepEqual(units, want) {
		t.Errorf("without keep, the workers got %v, want the copies and the deletes, each in units of their own: %v", units, want)
	}
}

// TestRunReportsItsRate: the result's rate is the items written (copied and
// deleted) per second of the run.
func TestRunReportsItsRate(t *testing.T) {
	items, recs := modelItems(3)
	for i := range 2 {
		k, _ := tablediff.EncodeKey(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("extra%d", i)}}, []string{"id"})
		recs = append(recs, tablediff.KeyRecord{Kind: tablediff.OnlyInTarget, Key: k, TargetSum: "x"})
	}
	keys := writeKeys(t, "from", "to", recs)
	ctx := testctx.Bounded(t)
	res, err := Run(ctx, &modelDB{items: items}, Options{From: "from", To: "to", KeysFile: keys, Unconditional: true, DeleteExtra: true, Workers: 2})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{3, 2}, [2]int64{res.Copied, res.Deleted})
	require.Greater(t, res.Seconds, 0.0)
	assert.InDelta(t, 5/res.Seconds, res.ItemsPerSec, 5/res.Seconds/1e6, "items written per second")
}

// TestPipelineStartsNoWorkerOnceTheContextHasEnded: after a failure or an
// interrupt, the unconditional pipeline takes no further unit of work (a
// reader started then would read and count it).
func TestPipelineStartsNoWorkerOnceTheContextHasEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.Bounded(t))
	cancel()
	work := make(chan unit, 1)
	work <- unit{recs: []tablediff.KeyRecord{{Kind: tablediff.OnlyInTarget, Key: []byte(`{"id":{"S":"a"}}`)}}}
	close(work)
	r := &runner{opts: Options{Workers: 4}, res: &Result{ConflictSample: []Conflict{}}}
	var g errgroup.Group
	r.pipeline(ctx, &g, work)
	require.NoError(t, g.Wait())
	assert.Len(t, work, 1, "the unit is still waiting: no reader took it")
	assert.Zero(t, r.kept.Load()+r.done.Load(), "nothing was counted")
}
