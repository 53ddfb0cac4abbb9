// Package shard is `dynops shard`: the shards of a sharded run, as an engine
// (local processes, AWS Batch, a Kubernetes Indexed Job) runs them.
package shard

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/shard/run"
)

// NewCmdShard returns `dynops shard` and its subcommands.
func NewCmdShard(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shard <command>",
		Short: "Run one shard of a sharded run (what an engine runs; see docs/scale.md)",
	}
	cmd.AddCommand(run.NewCmdRun(f, nil))
	return cmd
}
