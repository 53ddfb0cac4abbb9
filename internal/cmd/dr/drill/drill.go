// Package drill implements `dynops dr drill`: a failover and a failback end
// to end in a non-prod environment, timed step by step.
package drill

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/dr/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/iostreams"
)

// Options of `dynops dr drill`.
type Options struct {
	Target shared.TargetFlags
	Switch shared.SwitchFlags
	// PauseTemplate is the AWS FIS experiment template of a pause drill
	// ("": the failover and failback drill).
	PauseTemplate string
	// Alarm is the ReplicationLatency alarm a pause drill waits for.
	Alarm string
	// KeepRunning leaves a pause drill's experiment to its own end.
	KeepRunning bool
	// PauseTimeout bounds each wait of a pause drill.
	PauseTimeout time.Duration
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
--yes it is a dry run.

With --pause-replication TEMPLATE_ID the drill breaks replication instead:
it starts the AWS FIS experiment (modules/dr output
fis_pause_replication_template_id, in the --to region; the template must
run only aws:dynamodb:global-table-pause-replication on this table there, in
the caller's account (sts:GetCallerIdentity); otherwise exit 2),
waits until the pause shows in the replica's resource policy, checks that a
failover into --to is refused (replication-paused), waits for --alarm to
fire when given, then stops the experiment and waits until the pause is
gone. The experiment is stopped on every way out, Ctrl-C included, unless
--keep-running; it is stopped at once when the experiment FIS started runs
other actions or targets than the template the drill checked (exit 2).`,
		Example: `  dynops dr drill --table stg-hoge-session --yes
  dynops dr drill --table local-hoge-session --regions eu-west-1,eu-central-1 --allow-unreplicated --yes
  dynops dr drill --table stg-hoge-session --to eu-central-1 --pause-replication EXT1a2b3c4d5e6f7 --alarm stg-hoge-session-replication-latency-eu-central-1 --yes`,
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
			if opts.PauseTemplate == "" && (opts.Alarm != "" || opts.KeepRunning) {
				return factory.UsageErrorf("--alarm and --keep-running belong to a pause drill: give --pause-replication TEMPLATE_ID too")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddTargetFlags(cmd, &opts.Target)
	shared.AddSwitchFlags(cmd, &opts.Switch, "the region to fail over to, or whose replication --pause-replication pauses (default: the one other region; required with three or more replicas)")
	fl := cmd.Flags()
	fl.StringVar(&opts.PauseTemplate, "pause-replication", "", "AWS FIS experiment template ID (in the --to region) that pauses replication into it: drill the pause instead of a failover")
	fl.StringVar(&opts.Alarm, "alarm", "", "with --pause-replication: the ReplicationLatency alarm that must fire (in the --to region)")
	fl.BoolVar(&opts.KeepRunning, "keep-running", false, "with --pause-replication: leave the experiment to its own end instead of stopping it once every check has its answer")
	fl.DurationVar(&opts.PauseTimeout, "pause-timeout", 15*time.Minute, "with --pause-replication: bound on each wait (the experiment's start, the pause, the alarm, the end)")
	flagcheck.Range(fl, "pause-timeout", "10s", "24h", "FIS takes seconds to start an experiment")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the drill stopped between steps (the audit log lists what was done); run `dynops dr status` and delete any canary item it names; a pause drill stops its FIS experiment on the way out (if it could not, the audit's start-experiment step names it: aws fis stop-experiment --id ID)")
	cmdfacts.SetTimeout(cmd, 10*time.Second)
	cmdfacts.SetTargets(cmd, "table", "from", "to")
	return cmd
}

// Run runs (or plans) the drill and prints the timings.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	// A drill never runs on a protected table, typed name or not.
	decided, err := shared.Protection(ctx, f, &opts.Target)
	if err != nil {
		return err
	}
	if err := decided.CheckTyped(opts.Switch.Confirm); err != nil {
		return err
	}
	dec := decided.Decisions()[0]
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
	if opts.PauseTemplate != "" {
		return runPause(ctx, f, opts, target, runner, g)
	}
	req := opts.Switch.Request(failover.Failover, target, &opts.Target, !g.DryRun())
	p := shared.NewProgress(f)
	p.Header("drill", req)
	p.StreamSteps(runner)
	d, runErr := runner.Drill(ctx, req)
	shared.CountSteps(f, &d.Failover, d.Failback)
	err = view.Results(f, func(d failover.DrillResult) error { return printDrill(f.IOStreams, d, g) }).Show(d)
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

// runPause runs (or plans) the pause drill in the --to region.
func runPause(ctx context.Context, f *factory.Factory, opts *Options, target failover.Target, runner *failover.Runner, g *guard.Confirmed) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	region := opts.Switch.To
	if region == "" {
		if len(target.Regions) != 2 {
			return factory.UsageErrorf("--pause-replication needs --to REGION: %s has %d regions (%v)", target.Table, len(target.Regions), target.Regions)
		}
		for _, r := range target.Regions {
			if r != clients.Region() {
				region = r
			}
		}
	}
	account, err := callerAccount(ctx, f)
	if err != nil {
		return err
	}
	rc := clients.In(region)
	req := failover.PauseDrillRequest{Target: target, Template: opts.PauseTemplate, Region: region, Account: account, Alarm: opts.Alarm,
		Rules:   opts.Switch.Request(failover.Failover, target, &opts.Target, false).Rules,
		Execute: !g.DryRun(), KeepRunning: opts.KeepRunning, Timeout: opts.PauseTimeout}
	runner.OnStep = func(s failover.Step) {
		f.IOStreams.Infof("%-18s %-7s %s %s\n", s.Name, s.Status, s.Duration.Round(time.Millisecond), s.Detail)
	}
	res, runErr := runner.PauseDrill(ctx, rc.FIS(), rc.CloudWatch(), req)
	err = view.Results(f, func(r failover.PauseDrillResult) error { return printPause(f.IOStreams, r, g) }).Show(res)
	if runErr != nil {
		return refusal(runErr)
	}
	return err
}

// refusal makes a template the drill does not run (failover.ErrTemplateRefused,
// a started experiment already stopped) a usage error: exit 2.
func refusal(err error) error {
	if errors.Is(err, failover.ErrTemplateRefused) {
		return factory.UsageErrorf("%w", err)
	}
	return err
}

// callerAccount is the account of the run's identity: the one account a
// pause drill's experiment may target (unreadable: refused).
func callerAccount(ctx context.Context, f *factory.Factory) (string, error) {
	caller, err := f.CallerArn(ctx)
	if err != nil {
		return "", fmt.Errorf("a pause drill checks that its experiment targets only the caller's account: %w", err)
	}
	a, err := arn.Parse(caller)
	if err != nil {
		return "", fmt.Errorf("a pause drill checks that its experiment targets only the caller's account, but the caller %q is not an ARN: %w", caller, err)
	}
	return a.AccountID, nil
}

func printPause(ios *iostreams.IOStreams, res failover.PauseDrillResult, g *guard.Confirmed) error {
	var rows [][]string
	for _, st := range res.Steps {
		rows = append(rows, []string{st.Name, string(st.Status), st.Duration.Round(time.Millisecond).String(), st.Plan})
	}
	fmt.Fprintf(ios.Out, "pause drill of %s in %s (experiment template %s)\n", res.Table, res.Region, res.Template)
	if err := ios.Table([]string{"STEP", "STATUS", "TIME", "WHAT"}, rows); err != nil {
		return err
	}
	if res.DryRun {
		g.PrintDryRun("start the experiment")
		return nil
	}
	if res.OK {
		fmt.Fprintf(ios.Out, "\nreplication into %s was paused, dynops refused a failover into it while paused", res.Region)
		if res.AlarmFired != nil {
			fmt.Fprint(ios.Out, ", and the alarm fired")
		}
		fmt.Fprintln(ios.Out)
	}
	return nil
}
