package tablediff

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/engine"
)

// TestOfShardPartitionsTheKeys: N shards see every key exactly once, each
// the keys of its bucket hash; no shard sees them all.
func TestOfShardPartitionsTheKeys(t *testing.T) {
	var keys []KeyRecord
	for i := range 200 {
		keys = append(keys, KeyRecord{Kind: Changed, Key: json.RawMessage(fmt.Sprintf(`{"id":{"S":"k%d"}}`, i))})
	}
	seen := map[string]int{}
	for i := range 3 {
		n := 0
		fn := OfShard(engine.Shard{Index: i, Count: 3}, func(r KeyRecord) error { seen[string(r.Key)]++; n++; return nil })
		for _, k := range keys {
			require.NoError(t, fn(k))
		}
		assert.Positive(t, n)
		assert.Less(t, n, len(keys))
	}
	assert.Len(t, seen, len(keys))
	for k, n := range seen {
		assert.Equal(t, 1, n, k)
		assert.Equal(t, bucketOf([]byte(k), 3), KeyShard([]byte(k), 3), "the buckets' hash")
	}
	all := 0
	fn := OfShard(engine.Shard{}, func(KeyRecord) error { all++; return nil })
	for _, k := range keys {
		require.NoError(t, fn(k))
	}
	assert.Equal(t, len(keys), all, "no shard: every key")
}
