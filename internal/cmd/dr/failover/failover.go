// Package failover implements `dynops dr failover`: move a global table's
// writes to another region, with preflight, fencing and verification.
package failover

import (
	"context"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/dr/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/failover"
)

// Options of `dynops dr failover`.
type Options struct {
	Target shared.TargetFlags
	Switch shared.SwitchFlags
}

// NewCmdFailover returns `dynops dr failover`. runF replaces the run function in tests of flag parsing.
func NewCmdFailover(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "failover --table NAME --to REGION [--yes] [--force]",
		Short: "Move a global table's writes to another region (DDB-DR-01)",
		Long: `Failover moves the writes of a global table from the region the active-region
pointer names to --to, in named steps:

  preflight          the target replica is ACTIVE, ReplicationLatency into it is under
                     --max-replication-latency, it carries no fence, the pointer agrees
  fence-old          a resource policy on the old region's table denies item writes to
                     every principal but --break-glass-role-arn (and the replication role)
  flip-pointer       the SSM pointer names --to in every region, read back
  route53            the health checks of the other regions' failover records are inverted
  canary             an item written in --to and read back
  replication-check  the canary seen in the old region, then deleted

Without --yes it is a dry run: the preflight runs and every step is printed.
--force (the old region is down) skips only the checks and steps the old region
cannot answer, and says so. A failed step stops the run and prints how to roll back.`,
		Example: `  dynops dr failover --table prod-hoge-session --to eu-central-1
  dynops dr failover --table prod-hoge-session --to eu-central-1 --yes --confirm prod-hoge-session
  dynops dr failover --table prod-hoge-session --to eu-central-1 --regions eu-west-1,eu-central-1 --force --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.Validate(); err != nil {
				return err
			}
			if opts.Switch.To == "" {
				return factory.UsageErrorf("--to is required: the region writes move to (e.g. --to eu-central-1)")
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
	shared.AddSwitchFlags(cmd, &opts.Switch, "the region writes move to")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the failover stopped between steps (the audit log lists what was done); run `dynops dr status`, then the same failover again or the runbook's rollback")
	cmdfacts.SetTimeout(cmd, 10*time.Second)
	cmdfacts.SetTargets(cmd, "table", "from", "to")
	return cmd
}

// Run runs (or, without --yes, plans) the failover.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	return shared.RunSwitch(ctx, f, failover.Failover, &opts.Target, &opts.Switch)
}
