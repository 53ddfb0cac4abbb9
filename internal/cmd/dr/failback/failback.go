// Package failback implements `dynops dr failback`: return a global table's
// writes to the region an earlier failover fenced, and remove every fence.
package failback

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/dr/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/failover"
)

// Options of `dynops dr failback`.
type Options struct {
	Target shared.TargetFlags
	Switch shared.SwitchFlags
}

// NewCmdFailback returns `dynops dr failback`. runF replaces the run function in tests of flag parsing.
func NewCmdFailback(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "failback --table NAME [--to REGION] [--yes]",
		Short: "Return a global table's writes to the region a failover left, and remove the fences",
		Long: `Failback returns writes to --to (default: the one region a dynops dr fence holds;
required when several do, as after a failover of three or more replicas) in named steps:

  preflight          as for failover; the target's fence is expected
  fence-old          the region writes leave is fenced while the pointer moves,
                     so that no two regions take writes at once
  fence-others       three or more replicas: any other replica still open, the same way
  unfence-target     the target's fence is removed, read back
  drain, drain-check as for failover (docs/dr-drain.md)
  flip-pointer       the SSM pointer names --to in every region, read back
  route53            every health check back to not inverted (automatic failover again)
  canary             an item written in --to and read back
  replication-check  the canary seen in the region writes left, then deleted
  unfence-old        the fences of dynops dr are removed from every replica but --to,
                     each read back; another owner's fence (a migration's) stays

The preflight's target-fence row names the fence on --to and its owner. Without
--yes it is a dry run. A failed step stops the run and prints how to roll back.`,
		Example: `  dynops dr failback --table prod-hoge-session
  dynops dr failback --table prod-hoge-session --to eu-west-1 --yes --confirm prod-hoge-session`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.Validate(); err != nil {
				return err
			}
			if err := opts.Switch.Validate(&opts.Target); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddTargetFlags(cmd, &opts.Target)
	shared.AddSwitchFlags(cmd, &opts.Switch, "the region writes return to (default: the one fenced region)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the failback stopped between steps (the audit log lists what was done); run `dynops dr status`, then the same failback again")
	cmdfacts.SetTimeout(cmd, 10*time.Second)
	cmdfacts.SetTargets(cmd, "table", "from", "to")
	return cmd
}

// Run runs (or, without --yes, plans) the failback.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	return shared.RunSwitch(ctx, f, failover.Failback, &opts.Target, &opts.Switch)
}
