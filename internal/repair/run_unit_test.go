package repair

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

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
