package diff

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/factory"
)

func parse(t testing.TB, args ...string) (*Options, error) {
	return cmdtest.Parse(t, NewCmdDiff, args...)
}

func TestDiffFlags(t *testing.T) {
	o, err := parse(t, "--source", "b", "--target", "a")
	require.NoError(t, err)
	assert.Equal(t, 4, o.Diff.Segments)
	assert.Equal(t, 0, o.Diff.Buckets, "sized from the item count")
	assert.Equal(t, 10, o.Diff.SampleSize)
	assert.Empty(t, o.Diff.Attributes, "whole items by default")

	o, err = parse(t, "--source", "b", "--target", "a", "--segments", "16", "--buckets", "64", "--attributes", "status,email", "--keys-out", "k.jsonl", "--exit-code")
	require.NoError(t, err)
	assert.Equal(t, 16, o.Diff.Segments)
	assert.Equal(t, 64, o.Diff.Buckets)
	assert.Equal(t, []string{"status", "email"}, o.Diff.Attributes)
	assert.Equal(t, "k.jsonl", o.Diff.KeysOut)
	assert.True(t, o.ExitCode)

	o, err = parse(t, "--source-export", "s3://bkt/full/AWSDynamoDB/01-x", "--target", "t", "--export-parallel", "8")
	require.NoError(t, err)
	assert.Equal(t, "s3://bkt/full/AWSDynamoDB/01-x", o.SourceExport)
	assert.Equal(t, 8, o.Diff.ExportParallel)
	o, err = parse(t, "--source-export", "s3://b/p1", "--target-export", "s3://b/p2", "--key", "tenant,sk")
	require.NoError(t, err)
	assert.Equal(t, []string{"tenant", "sk"}, o.Diff.KeyNames)

	// Every bound itself is allowed.
	o, err = parse(t, "--source", "b", "--target", "a", "--segments", "1", "--buckets", "4096")
	require.NoError(t, err)
	assert.Equal(t, 1, o.Diff.Segments)
	assert.Equal(t, 4096, o.Diff.Buckets)
	o, err = parse(t, "--source", "b", "--target", "a", "--segments", "1000000", "--sample", "1")
	require.NoError(t, err)
	assert.Equal(t, 1000000, o.Diff.Segments)
	assert.Equal(t, 1, o.Diff.SampleSize)
}

func TestDiffFlagsRefused(t *testing.T) {
	cases := map[string][]string{
		"needs one --target":                             {"--source", "a"},
		"needs one --source":                             {"--target", "a"},
		"needs one --source: a table (--source NAME) or": {"--source", "a", "--source-export", "s3://b/p", "--target", "b"},
		"needs one --target: a table":                    {"--source", "a", "--target", "b", "--target-export", "s3://b/p"},
		"both sides are exports":                         {"--source-export", "s3://b/p1", "--target-export", "s3://b/p2"},
		"are both s3://b/p":                              {"--source-export", "s3://b/p", "--target-export", "s3://b/p", "--key", "id"},
		"--key [a b c]":                                  {"--source-export", "s3://b/p", "--target", "t", "--key", "a,b,c"},
		"are both a":                                     {"--source", "a", "--target", "a"},
		"--segments 0 is out of range: use 1 to 1000000": {"--source", "a", "--target", "b", "--segments", "0"},
		"--buckets 5000":                                 {"--source", "a", "--target", "b", "--buckets", "5000"},
		"--sample 0 is out of range: use 1 or more":      {"--source", "a", "--target", "b", "--sample", "0"},
	}
	for msg, args := range cases {
		t.Run(msg, func(t *testing.T) {
			o, err := parse(t, args...)
			require.Error(t, err)
			assert.True(t, factory.IsUsageError(err))
			assert.Contains(t, err.Error(), msg)
			assert.Nil(t, o)
		})
	}
}
