// Package catchup implements `dynops migrate catch-up`.
package catchup

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate catch-up`.
type Options struct {
	shared.Flags
	budget.Budgets
	Confirm              []string
	Follow               bool
	Interval             time.Duration
	Workers              int
	AllowUnmatched       bool
	AllowUntransformable bool
}

// NewCmdCatchUp returns `dynops migrate catch-up`. runF replaces the run function in tests of flag parsing.
func NewCmdCatchUp(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "catch-up --source TABLE --routes FILE [--follow]",
		Short: "Apply the source stream's changes to the destinations",
		Long: `Catch-up reads the source's stream from the position the backfill recorded
(then from its own checkpoint) to the stream's tip, and applies each key's
last change to the key's destination: INSERT and MODIFY put the routed,
transformed new image; REMOVE deletes the key. Shards are read parents first,
so a key's changes are in order; each write carries the record's sequence
number and is conditional on the destination holding an older one, so a change
never overwrites a newer one. An item whose key moved to another route (new
SK prefix) is deleted from its old destination by its REMOVE.

Before its first write it runs the checks of migrate plan on the source and
the destinations, and each pass checks its changes before it applies any: a
change no rule matches or its route cannot transform refuses the pass (exit
2, nothing written, the checkpoint unmoved) unless allowed, as the backfill
was run or with --allow-unmatched / --allow-untransformable.

It prints the lag (age of the newest change applied). --follow repeats until
interrupted. A position older than the stream's 24 h retention is refused: it
needs a new backfill.`,
		Example: `  dynops migrate catch-up --source dev-aiagent-single --routes routes.yaml
  dynops migrate catch-up --source dev-aiagent-single --routes routes.yaml --follow --interval 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddFlags(cmd, &opts.Flags)
	shared.AddConfirmFlag(cmd, &opts.Confirm)
	fl := cmd.Flags()
	fl.BoolVar(&opts.Follow, "follow", false, "keep applying changes until interrupted")
	fl.DurationVar(&opts.Interval, "interval", time.Second, "pause between passes with --follow once caught up")
	flagcheck.Range(fl, "interval", "1ms", "", "a pause of 0 reads the stream without rest")
	opts.Budgets.AddFlags(cmd.Flags(), "", "each destination table")
	fl.IntVar(&opts.Workers, "workers", 8, "concurrent conditional writes")
	flagcheck.Range(fl, "workers", "1", "256", "writes at once")
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "skip changes of keys no rule matches instead of failing (default: as the backfill was run)")
	fl.BoolVar(&opts.AllowUntransformable, "allow-untransformable", false, "skip changes their route cannot transform instead of failing (default: as the backfill was run)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "changes applied so far stay applied and the state file records the stream position; run catch-up again: it continues from there")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// Run applies the stream once, or until interrupted with --follow.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, false)
	if err != nil {
		return err
	}
	if err := l.RequireState(&opts.Flags); err != nil {
		return err
	}
	// Protected destinations are refused first (the guard), then the plan's
	// checks run before anything is written.
	if err := shared.ConfirmWrites(ctx, f, l, opts.Confirm, false); err != nil {
		return err
	}
	err = shared.Preflight(ctx, f, l, migrate.PreflightOptions{Written: true, AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable})
	if err != nil {
		return err
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	if err := shared.Hold(ctx, f, &opts.Budgets, &c, nil, l.Input.Routes.Tables()); err != nil {
		return err
	}
	defer opts.Budgets.Record(f)
	v := newView(f, opts)
	o := migrate.CatchUpOptions{Input: l.Input, Workers: opts.Workers, AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable, Now: f.Now,
		Follow: opts.Follow, Interval: opts.Interval,
		OnPass: func(n int, p *migrate.PassResult) {
			if p.Put+p.Deleted+p.MovedAway > 0 {
				f.Audit.Act(audit.ActApplyStreamChanges, opts.Source, map[string]int64{"put": p.Put, "deleted": p.Deleted, "deleted_from_old_route": p.MovedAway})
			}
			v.Pass(n, p)
		}}
	// left says that items were left behind (unmatched, untransformable):
	// the pass finished, so its result is printed before the error.
	total, passes, left := migrate.CatchUp(ctx, c, o, l.State)
	if left != nil && !migrate.LeftBehind(left) {
		return shared.Refusal(left)
	}
	if err := v.Total(total, passes, opts.Budgets.Uses()); err != nil {
		return err
	}
	return left
}

// catchUpView shows a catch-up: each pass (with --follow), then the total.
type catchUpView interface {
	Pass(n int, p *migrate.PassResult)
	Total(total migrate.PassResult, passes int, uses []capacity.Use) error
}

// newView is the run's view: human, or JSON under --output json.
func newView(f *factory.Factory, opts *Options) catchUpView {
	return view.Pick[catchUpView](f, humanView{f: f, source: opts.Source, follow: opts.Follow}, jsonView{f: f})
}

// humanView shows each pass of --follow on stderr and the total as lines.
type humanView struct {
	f      *factory.Factory
	source string
	follow bool
}

func (v humanView) Pass(n int, p *migrate.PassResult) {
	if v.follow {
		v.f.IOStreams.Infof("pass %d: %d record(s), %d key(s): put %d, deleted %d, moved %d, stale %d, unmatched %d; lag %s%s\n",
			n, p.Records, p.Keys, p.Put, p.Deleted, p.MovedAway, p.Stale, p.Unmatched+p.Untransformable, p.LagString(), caught(p))
	}
}

func (v humanView) Total(total migrate.PassResult, passes int, _ []capacity.Use) error {
	out := v.f.IOStreams.Out
	fmt.Fprintf(out, "Catch-up of %s: %d pass(es), %d record(s) read (%d older than the backfill, skipped), %d key(s) changed\n",
		v.source, passes, total.Records, total.BeforeBackfill, total.Keys)
	fmt.Fprintf(out, "  put %d, deleted %d, deleted from an old route %d, skipped as older than the destination %d, unmatched %d, untransformable %d\n",
		total.Put, total.Deleted, total.MovedAway, total.Stale, total.Unmatched, total.Untransformable)
	for _, k := range total.UntransformableSample {
		fmt.Fprintf(out, "  cannot transform: %s\n", k)
	}
	fmt.Fprintf(out, "  lag %s%s\n", total.LagString(), caught(&total))
	return nil
}

// jsonView shows nothing of the passes and the total as the JSON document:
// the pass counts with the capacity each table used.
type jsonView struct{ f *factory.Factory }

func (jsonView) Pass(int, *migrate.PassResult) {}

func (v jsonView) Total(total migrate.PassResult, _ int, uses []capacity.Use) error {
	return v.f.PrintResult(struct {
		migrate.PassResult
		Capacity []capacity.Use `json:"capacity"`
	}{total, uses})
}

func caught(p *migrate.PassResult) string {
	if p.CaughtUp {
		return " (caught up with the stream's tip)"
	}
	return ""
}
