package repair

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/engine"
)

func TestRepairShardFlag(t *testing.T) {
	o, err := parse(t, "--from", "a-restored", "--to", "a", "--keys", "k.jsonl", "--shard", "1/4")
	require.NoError(t, err)
	assert.Equal(t, engine.Shard{Index: 1, Count: 4}, o.Repair.Shard)
	o, err = parse(t, "--from", "a-restored", "--to", "a", "--keys", "k.jsonl")
	require.NoError(t, err)
	assert.Equal(t, engine.Shard{}, o.Repair.Shard, "every key by default")

	base := []string{"--from", "a-restored", "--to", "a"}
	cmdtest.ExpectUsages(t, NewCmdRepair, base, []cmdtest.Case{
		{Args: []string{"--keys", "k.jsonl", "--shard", "4/4"}, WantErr: "want I/N with 0 <= I < N"},
		{Args: []string{"--keys", "k.jsonl", "--shard", "x"}, WantErr: "want I/N, for example 0/4"},
		{Args: []string{"--all-differences", "--shard", "0/2"}, WantErr: "--shard 0/2 needs --keys FILE"},
	})
}
