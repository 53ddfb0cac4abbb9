// Package drill implements `dynops dr drill`: a failover and a failback end
// to end in a non-prod environment, timed step by step.
package drill

import (
	"context"
	"fmt"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/dr/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
)

// Options of `dynops dr drill`.
type Options struct {
	Target shared.TargetFlags
	Switch shared.SwitchFlags
}

// NewCmdDrill returns `dynops dr drill`. runF replaces the run function in tests of flag parsing.
func NewCmdDrill(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "drill --table NAME [--to REGION] [--yes]",
		Short: "Rehearse a failover and a failback end to end, timing each step (non-prod only)",
		Long: `Drill runs ` + "`dynops dr failover`" + ` to --to (default: the one other region) and then
` + "`dynops dr failback`" + `, with every check, fence and canary of the real thing, and
reports the time each step took: the measured RTO of the procedure. It refuses
protected tables (docs/protection.md): rehearse on dev or stg. Without
--yes it is a dry run.`,
		Example: `  dynops dr drill --table stg-hoge-session --yes
  dynops dr drill --table local-hoge-session --regions eu-west-1,eu-central-1 --allow-unreplicated --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.Validate(); err != nil {
				return err
			}
			if opts.Switch.Force {
				return factory.UsageErrorf("drill does not take --force: a rehearsal needs both regions answering")
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
	shared.AddSwitchFlags(cmd, &opts.Switch, "the region to fail over to (default: the one other region; required with three or more replicas)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the drill stopped between steps (the audit log lists what was done); run `dynops dr status` and delete any canary item it names")
	cmdfacts.SetTimeout(cmd, 10*time.Second)
	cmdfacts.SetTargets(cmd, "table", "from", "to")
	return cmd
}

// Run runs (or plans) the drill and prints the timings.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	// A drill never runs on a protected table, typed name or not.
	dec, err := shared.Protection(ctx, f, &opts.Target)
	if err != nil {
		return err
	}
	if err := factory.ConfirmMatches(factory.Confirmation{Targets: []protect.Decision{dec}, Typed: opts.Switch.Confirm}); err != nil {
		return err
	}
	if dec.Protected {
		return factory.UsageErrorf("drill refuses %s: rehearse on a table dynops can show is not protected (dev or stg); a real switch is `dynops dr failover`; nothing was changed", dec)
	}
	g, err := opts.Switch.ConfirmSwitch(ctx, f, &opts.Target)
	if err != nil {
		return err
	}
	target, runner, err := shared.Resolve(ctx, f, &opts.Target)
	if err != nil {
		return err
	}
	req := opts.Switch.Request(failover.Failover, target, &opts.Target, !g.DryRun())
	shared.Header(f, "drill", req)
	shared.StreamSteps(f, runner)
	d, runErr := runner.Drill(ctx, req)
	shared.CountSteps(f, &d.Failover, d.Failback)
	if f.JSON() {
		err = f.IOStreams.PrintJSON(d)
	} else {
		err = printDrill(f.IOStreams, d, g)
	}
	if runErr != nil {
		return runErr
	}
	return err
}

func printDrill(ios *iostreams.IOStreams, d failover.DrillResult, g *guard.Confirmed) error {
	if !d.OK || d.DryRun {
		if err := shared.PrintResult(ios, d.Failover, g); err != nil {
			return err
		}
		if d.Failback == nil {
			if d.DryRun && d.OK {
				fmt.Fprintf(ios.Out, "then: failback %s -> %s with the same steps back\n", d.Away, d.Home)
			}
			return nil
		}
		return shared.PrintResult(ios, *d.Failback, g)
	}
	fmt.Fprintf(ios.Out, "\nstep timings of the drill (%s: %s -> %s -> %s)\n", d.Table, d.Home, d.Away, d.Home)
	var rows [][]string
	for _, part := range []failover.Result{d.Failover, *d.Failback} {
		for _, st := range part.Steps {
			rows = append(rows, []string{string(part.Mode), st.Name, string(st.Status), st.Duration.Round(time.Millisecond).String()})
		}
		rows = append(rows, []string{string(part.Mode), "total", "", part.Duration.Round(time.Millisecond).String()})
	}
	if err := ios.Table([]string{"PHASE", "STEP", "STATUS", "TIME"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "\nmeasured RTO (failover, preflight to verified canary): %s; drill total %s\n",
		d.RTO.Round(time.Millisecond), d.Total.Round(time.Millisecond))
	return nil
}
