// Package failover implements `dynops dr failover`: move a global table's
// writes to another region, with preflight, fencing and verification.
package failover

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
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
                     --max-replication-latency, it carries no fence, no replica's policy
                     pauses replication (AWS FIS), the pointer agrees; with
                     --pause-template, no experiment of the env's pause template is
                     pending, initiating or running in --to (fis:ListExperiments;
                     one that cannot be listed refuses);
                     the drain is computed and printed with the metric values it used
  drain-canary       an item written in the old region just before the fence
  fence-old          a resource policy on the old region's table denies item writes to
                     every principal but --break-glass-role-arn (and the replication role)
  fence-others       three or more replicas: every replica but --to is fenced the same
                     way, each read back (one that does not answer refuses, unless --force)
  drain              wait --drain-multiplier (10) x the recent maximum ReplicationLatency
                     from every other region into --to, within --drain-floor and
                     --drain-cap (AWS's evacuation guidance); --drain-unhealthy when a
                     region's metric cannot be read; a countdown with the ETA
  drain-check        the drain canary read in --to (strongly consistent) before the flip
  flip-pointer       the SSM pointer names --to in every region, read back
  route53            the health checks of the other regions' failover records are inverted
  canary             an item written in --to and read back
  replication-check  the canary seen in the old region, then deleted

Without --yes it is a dry run: the preflight runs and every step is printed.
--force (the old region is down) skips only the checks and steps the old region
cannot answer, and says so. A failed step stops the run and prints how to roll back.
--drain replaces the computed drain; a shorter one (0s included) needs --force and
--reason. A run killed during its drain leaves the old region fenced and the pointer
on it (dr status: HALF-DONE); the same command again finishes the drain from the
canary's time and flips. See docs/dr-drain.md.`,
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
	shared.AddPauseTemplateFlag(cmd, &opts.Switch)
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
