package shardrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenAndNew(t *testing.T) {
	r, err := Open(nil, "s3://ops/diff-runs/r-1")
	require.NoError(t, err)
	assert.Equal(t, Run{Bucket: "ops", Prefix: "diff-runs/r-1/", ID: "r-1"}, *r)
	assert.Equal(t, "s3://ops/diff-runs/r-1", r.URI())
	assert.Equal(t, "s3://ops/diff-runs/r-1/plan.json", r.Where("plan.json"))

	r, err = New(nil, "s3://ops", "r-2")
	require.NoError(t, err)
	assert.Equal(t, "r-2/", r.Prefix, "a run at the bucket's root")
	r2, err := Open(nil, r.URI())
	require.NoError(t, err)
	assert.Equal(t, *r, *r2, "Open reads what URI writes")

	for uri, want := range map[string]string{
		"ops/diff-runs/r":   "is not an S3 URI",
		"s3://":             "has no bucket",
		"s3://ops":          "names no run",
		"s3://ops/p/a b":    `run ID "a b"`,
		"s3://ops/p/-start": "starting with a letter or digit",
	} {
		_, err := Open(nil, uri)
		if want == "" {
			assert.NoError(t, err, uri)
			continue
		}
		require.Error(t, err, uri)
		assert.Contains(t, err.Error(), want, uri)
	}
}
