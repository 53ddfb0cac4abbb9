// Package cutover implements `dynops migrate cutover`.
package cutover

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	verifyCmd "github.com/dynops/dynops/internal/cmd/migrate/verify"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate cutover`.
type Options struct {
	shared.Flags
	Pointer        string
	Value          string
	BreakGlassRole string
	Settle         time.Duration
	DrainTimeout   time.Duration
	AllowUnmatched bool
	Yes            bool
	Confirm        []string
}

// Report is the --output json document.
type Report struct {
	DryRun bool                   `json:"dry_run"`
	Steps  []migrate.Step         `json:"steps"`
	Result *migrate.CutoverResult `json:"result,omitempty"`
}

// NewCmdCutover returns `dynops migrate cutover`. runF replaces the run function in tests of flag parsing.
func NewCmdCutover(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "cutover --source TABLE --routes FILE [--pointer NAME] [--yes]",
		Short: "Fence the source, drain the stream, verify, flip the application's pointer",
		Long: `Cutover moves the application to the destinations in four steps, stopping at
the first that fails:

  1. fence: deny item writes on the source with its resource policy (the DR
     fence of ` + "`dynops dr failover`" + `, read back; --break-glass-role is exempt);
  2. drain: after --settle, apply the stream until a pass finds no new record;
  3. verify: compare the routed source with the destinations, 0 differences;
  4. flip-pointer: set the SSM parameter the application reads (--pointer,
     default /dynops/migrate/SOURCE/active) to --value (default multi), read back.

Before the fence it runs the checks of migrate plan (the source, the
destinations, every source item): a problem refuses the cutover, exit 2,
nothing changed.

Writes to the source fail from step 1 until the application follows the
pointer: keep that window short. If a step fails the source stays fenced:
fix the cause and run cutover again, or ` + "`dynops migrate rollback`" + `.

Without --yes it prints the steps and changes nothing; for prod tables it
also needs the source's name typed (or --confirm NAME).`,
		Example: `  dynops migrate cutover --source dev-aiagent-single --routes routes.yaml
  dynops migrate cutover --source prod-aiagent-single --routes routes.yaml --yes --confirm prod-aiagent-single`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if opts.Value == "" {
				return factory.UsageErrorf("--value is empty: give the pointer's value after the cutover (default %s)", migrate.PointerMulti)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddFlags(cmd, &opts.Flags)
	fl := cmd.Flags()
	fl.StringVar(&opts.Pointer, "pointer", "", "SSM parameter the application reads (default /dynops/migrate/SOURCE/active)")
	fl.StringVar(&opts.Value, "value", migrate.PointerMulti, "the pointer's value after the cutover")
	fl.StringVar(&opts.BreakGlassRole, "break-glass-role", "", "role ARN the fence exempts")
	fl.DurationVar(&opts.Settle, "settle", 2*time.Second, "wait after the fence for writes in flight to reach the stream")
	flagcheck.Range(fl, "settle", "0s", "", "")
	fl.DurationVar(&opts.DrainTimeout, "drain-timeout", 5*time.Minute, "give up draining the stream after this long")
	flagcheck.Range(fl, "drain-timeout", "1s", "", "the drain needs time to read the stream")
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "skip changes of keys no rule matches while draining (default: as the backfill was run)")
	fl.BoolVar(&opts.Yes, "yes", false, "cut over (without it: print the steps, change nothing)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the source table's name, if it is protected")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "once the fence step has run the source stays FENCED (its writes are refused) and the pointer is unchanged; run the same cutover again to finish, or lift the fence with `dynops migrate rollback --source SOURCE --routes FILE --yes`")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// confirm is the guard first (a protected source is refused before
// anything else is read), then the plan's checks, in a dry run too: the
// source's items are read as plan reads them, before the fence, since a
// problem found after it would leave the source fenced.
func confirm(ctx context.Context, f *factory.Factory, l *shared.Loaded, opts *Options, pointer string) (*guard.Confirmed, error) {
	was := l.State.Backfill
	g, err := shared.Confirm(ctx, f, opts.Source, pointer, opts.Yes, opts.Confirm)
	if err != nil {
		return nil, err
	}
	err = shared.Preflight(ctx, f, l, migrate.PreflightOptions{Written: true, Items: true,
		AllowUnmatched: opts.AllowUnmatched || (was != nil && was.AllowUnmatched), AllowUntransformable: was != nil && was.AllowUntransformable})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Run cuts over, or prints the steps in a dry run.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, false)
	if err != nil {
		return err
	}
	if err := l.RequireState(&opts.Flags); err != nil {
		return err
	}
	pointer := opts.Pointer
	if pointer == "" {
		pointer = migrate.DefaultPointer(opts.Source)
	}
	g, err := confirm(ctx, f, l, opts, pointer)
	if err != nil {
		return err
	}
	v := newView(f, opts)
	if g.DryRun() {
		rep := Report{DryRun: true, Steps: migrate.CutoverSteps(opts.Source, pointer, opts.Value)}
		f.Audit.Act(audit.ActCutover, opts.Source, rep.Steps)
		return v.DryRun(g, rep)
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	res, err := migrate.Cutover(ctx, c, migrate.CutoverOptions{
		CatchUp: migrate.CatchUpOptions{Input: l.Input, AllowUnmatched: opts.AllowUnmatched, Now: f.Now},
		Pointer: pointer, Value: opts.Value, BreakGlassRole: opts.BreakGlassRole, Settle: opts.Settle, DrainTimeout: opts.DrainTimeout,
		Act: f.Audit.Act,
	}, l.State)
	if res != nil {
		if perr := v.Steps(res); perr != nil {
			return perr
		}
	}
	if err != nil {
		return shared.Refusal(err)
	}
	v.CutOver()
	return nil
}

// cutoverView shows a cutover: the steps of a dry run, the steps that ran
// (also when one failed), and the closing line of one that succeeded.
type cutoverView interface {
	DryRun(g *guard.Confirmed, rep Report) error
	Steps(res *migrate.CutoverResult) error
	CutOver()
}

// newView is the run's view: human, or JSON under --output json.
func newView(f *factory.Factory, opts *Options) cutoverView {
	return view.Pick[cutoverView](f, humanView{f: f, source: opts.Source, value: opts.Value}, jsonView{f: f})
}

// humanView shows the steps as tables, the verify's differences, and the
// dry-run notice or where the pointer is now.
type humanView struct {
	f             *factory.Factory
	source, value string
}

func (v humanView) DryRun(g *guard.Confirmed, rep Report) error {
	printSteps(v.f, rep.Steps)
	g.PrintDryRun("cut over")
	return nil
}

func (v humanView) Steps(res *migrate.CutoverResult) error {
	printSteps(v.f, res.Steps)
	if res.Verify != nil && res.Verify.Differences() > 0 {
		fmt.Fprintln(v.f.IOStreams.Out)
		verifyCmd.Print(v.f, res.Verify)
	}
	return nil
}

func (v humanView) CutOver() {
	fmt.Fprintf(v.f.IOStreams.Out, "\nCut over: the application's pointer says %q. Keep %s (fenced) until the new tables have held; roll back with `dynops migrate rollback`.\n", v.value, v.source)
}

// jsonView shows the Report as the JSON document, and nothing else.
type jsonView struct{ f *factory.Factory }

func (v jsonView) DryRun(_ *guard.Confirmed, rep Report) error { return v.f.PrintResult(rep) }

func (v jsonView) Steps(res *migrate.CutoverResult) error {
	return v.f.PrintResult(Report{Steps: res.Steps, Result: res})
}

func (jsonView) CutOver() {}

func printSteps(f *factory.Factory, steps []migrate.Step) {
	var rows [][]string
	for _, s := range steps {
		rows = append(rows, []string{s.Name, s.Status, s.Detail})
	}
	_ = f.IOStreams.Table([]string{"STEP", "STATUS", "DETAIL"}, rows)
}
