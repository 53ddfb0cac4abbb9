package diff

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

func TestShardedFlags(t *testing.T) {
	o, err := parse(t, "--source", "a", "--target", "b")
	require.NoError(t, err)
	assert.Equal(t, Sharded{Engine: EngineNone, Shards: 1}, o.Sharded, "one process by default")
	assert.False(t, o.Sharded.on())

	o, err = parse(t, "--source", "a", "--target", "b", "--engine", "local", "--shards", "4", "--run-prefix", "s3://ops/diff-runs", "--run-id", "r-1")
	require.NoError(t, err)
	assert.Equal(t, Sharded{Engine: EngineLocal, Shards: 4, RunPrefix: "s3://ops/diff-runs", RunID: "r-1"}, o.Sharded)
	assert.True(t, o.Sharded.on())
}

func TestShardedFlagsRefused(t *testing.T) {
	base := []string{"--source", "a", "--target", "b"}
	cmdtest.ExpectUsages(t, NewCmdDiff, base, []cmdtest.Case{
		{Args: []string{"--engine", "local"}, WantErr: "--engine local needs --run-prefix s3://BUCKET/PREFIX"},
		{Args: []string{"--engine", "spark", "--run-prefix", "s3://b/p"}, WantErr: `--engine "spark": use none, local or batch`},
		{Args: []string{"--engine", "batch", "--run-prefix", "s3://b/p"}, WantErr: "--engine batch needs --batch-queue and --batch-job-definition"},
		{Args: []string{"--engine", "batch", "--run-prefix", "s3://b/p", "--batch-queue", "q"}, WantErr: "--engine batch needs --batch-queue and --batch-job-definition"},
		{Args: []string{"--engine", "local", "--run-prefix", "s3://b/p", "--batch-queue", "q"}, WantErr: "--batch-queue is for --engine batch"},
		{Args: []string{"--batch-job-definition", "d"}, WantErr: "--batch-job-definition is for a sharded run"},
		{Args: []string{"--engine", "batch", "--run-prefix", "s3://b/p", "--batch-queue", "q", "--batch-job-definition", "d", "--shards", "4"}},
		{Args: []string{"--shards", "2"}, WantErr: "--shards is for a sharded run: add --engine local"},
		{Args: []string{"--run-prefix", "s3://b/p"}, WantErr: "--run-prefix is for a sharded run"},
		{Args: []string{"--run-id", "x"}, WantErr: "--run-id is for a sharded run"},
		{Args: []string{"--engine", "local", "--run-prefix", "s3://b/p", "--shards", "0"}, WantErr: "--shards 0 is out of range: use 1 to 10000"},
		{Args: []string{"--engine", "local", "--run-prefix", "b/p"}, WantErr: "--run-prefix: \"b/p\" is not an S3 URI"},
		{Args: []string{"--engine", "local", "--run-prefix", "s3:///p"}, WantErr: "has no bucket"},
		{Args: []string{"--engine", "local", "--run-prefix", "s3://b/p", "--run-id", "a/b"}, WantErr: "--run-id: run ID \"a/b\""},
		{Args: []string{"--engine", "local", "--run-prefix", "s3://b/p", "--shards", "2"}},
	})
}
