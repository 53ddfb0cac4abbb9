package capacity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	bk, err := NewBucket(100, nil)
	require.NoError(t, err)
	b := Budget{Bucket: bk, Kind: Write, Table: "t", UnitsPerSecond: 100, Source: "--max-write-units"}
	got, err := b.Split(4)
	require.NoError(t, err)
	assert.Equal(t, 25.0, got.UnitsPerSecond)
	assert.Equal(t, 25.0, got.Bucket.Limit())
	assert.NotSame(t, bk, got.Bucket, "each shard holds its own bucket")
	assert.Equal(t, "--max-write-units, split evenly across 4 shards", got.Source)
	assert.Equal(t, "write budget on t: 25 units/s (--max-write-units, split evenly across 4 shards)", got.String())

	one, err := b.Split(1)
	require.NoError(t, err)
	assert.Equal(t, b, one)
	none := Budget{Kind: Write, Table: "t", Source: "on-demand table"}
	got, err = none.Split(4)
	require.NoError(t, err)
	assert.Equal(t, none, got, "no budget stays none")
}
