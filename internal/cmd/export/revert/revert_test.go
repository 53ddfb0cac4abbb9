package revert

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/engine"
)

func TestRevertShardFlag(t *testing.T) {
	base := []string{"--bucket", "b", "--prefix", "p", "--table", "t"}
	o, err := cmdtest.Parse(t, NewCmdRevert, append(base, "--shard", "1/3")...)
	require.NoError(t, err)
	assert.Equal(t, engine.Shard{Index: 1, Count: 3}, o.shard)
	o, err = cmdtest.Parse(t, NewCmdRevert, base...)
	require.NoError(t, err)
	assert.Equal(t, engine.Shard{}, o.shard, "every key by default")
	cmdtest.ExpectUsages(t, NewCmdRevert, base, []cmdtest.Case{
		{Args: []string{"--shard", "3/3"}, WantErr: "want I/N with 0 <= I < N"},
		{Args: []string{"--shard", "1"}, WantErr: "want I/N, for example 0/4"},
	})
}
