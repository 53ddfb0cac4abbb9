package run

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

func TestRunFlags(t *testing.T) {
	o, err := cmdtest.Parse(t, NewCmdRun, "--run", "s3://b/p/r", "--stage", "map", "--shard", "1/4")
	require.NoError(t, err)
	assert.Equal(t, "s3://b/p/r", o.Run)
	assert.Equal(t, StageMap, o.Stage)
	assert.Equal(t, "1/4", o.Shard)
}

func TestRunFlagsRefused(t *testing.T) {
	base := []string{"--run", "s3://b/p/r"}
	cmdtest.ExpectUsages(t, NewCmdRun, base, []cmdtest.Case{
		{Args: []string{"--stage", "sort", "--shard", "0/1"}, WantErr: `--stage "sort": use map or reduce`},
		{Args: []string{"--stage", "map"}, WantErr: "no shard given: pass --shard I/N"},
		{Args: []string{"--stage", "map", "--shard", "4/4"}, WantErr: "want I/N with 0 <= I < N"},
		{Args: []string{"--stage", "map", "--shards", "20000"}, WantErr: "--shards 20000 is out of range"},
		{Args: []string{"--stage", "reduce", "--shard", "3/4"}},
	})
	cmdtest.ExpectUsage(t, NewCmdRun, "shard run needs --run", "--stage", "map", "--shard", "0/1")
}
