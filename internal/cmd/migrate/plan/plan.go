// Package plan implements `dynops migrate plan`.
package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate plan`.
type Options struct {
	shared.Flags
	Sample               int
	Segments             int
	AllowUnmatched       bool
	AllowUntransformable bool
	PriceFile            string
}

// NewCmdPlan returns `dynops migrate plan`. runF replaces the run function in tests of flag parsing.
func NewCmdPlan(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "plan --source TABLE --routes FILE [--sample N]",
		Short: "Count the items per destination and check the destinations; writes nothing",
		Long: `Plan scans the source (all of it, or the first --sample N items) and counts
the items each destination would receive under the routes, the items no rule
matches (with sample keys) and the items a rename cannot transform. It checks
the source (key schema as the routes say, a stream with new images for the
catch-up) and each destination: it exists, has the source's primary key, is
empty, and which guideline rules it fails (` + "`dynops check`" + `, a warning).

Exit status 1 when the migration could not start (problems listed).`,
		Example: `  dynops migrate plan --source dev-aiagent-single --routes routes.yaml
  dynops migrate plan --source dev-aiagent-single --routes routes.yaml --sample 1000 -o json`,
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
	fl := cmd.Flags()
	fl.IntVar(&opts.Sample, "sample", 0, "read only the first N source items (0: the whole table)")
	flagcheck.Range(fl, "sample", "0", "", "0: the whole table")
	fl.IntVar(&opts.Segments, "segments", 4, "parallel Scan segments")
	flagcheck.Range(fl, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fl.BoolVar(&opts.AllowUnmatched, "allow-unmatched", false, "items no rule matches are a warning, not a problem")
	fl.BoolVar(&opts.AllowUntransformable, "allow-untransformable", false, "items their route cannot transform are a warning, not a problem")
	budget.AddPriceFlag(fl, &opts.PriceFile)
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// Run plans the migration and prints the plan.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, false)
	if err != nil {
		return err
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	res, err := migrate.Plan(ctx, c.DB, migrate.PlanOptions{Input: l.Input, Sample: opts.Sample, Segments: opts.Segments, AllowUnmatched: opts.AllowUnmatched, AllowUntransformable: opts.AllowUntransformable})
	if err != nil {
		return err
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	ps, err := paths(ctx, c.DB, res, prices, clients.Region())
	if err != nil {
		return err
	}
	if err := show(f, planned{res, ps}, prices); err != nil {
		return err
	}
	if !res.Ready {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// planned is the command's result: the plan and the backfill paths.
type planned struct {
	*migrate.PlanResult
	Paths []Path `json:"paths"`
}

// show shows the plan: its table and the paths, or the JSON document.
func show(f *factory.Factory, p planned, prices *capacity.Prices) error {
	return view.Results(f, func(p planned) error {
		if err := print(f, p.PlanResult); err != nil {
			return err
		}
		printPaths(f.IOStreams.Out, p.Paths, prices)
		return nil
	}).Show(p)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func print(f *factory.Factory, res *migrate.PlanResult) error {
	out := f.IOStreams.Out
	what := "all of it"
	if res.Sampled {
		what = "a sample"
	}
	fmt.Fprintf(out, "Source %s (key %s, ~%d items, stream %s): %d items read (%s)\n\n",
		res.Source.Table, res.Source.Key, res.Source.ItemCount, orNone(res.Source.Stream), res.Scanned, what)
	checks := map[string]migrate.DestinationCheck{}
	for _, d := range res.Destinations {
		checks[d.Table] = d
	}
	var rows [][]string
	for _, t := range res.Tables {
		d := checks[t.Table]
		empty := "-"
		if d.Empty != nil {
			empty = yesNo(*d.Empty)
		}
		failing := "none"
		if len(d.Failing) > 0 {
			failing = strings.Join(d.Failing, ",")
		}
		rows = append(rows, []string{t.Table, strings.Join(t.Routes, ","), fmt.Sprint(t.Items), yesNo(d.Exists), yesNo(d.KeyOK), empty, failing})
	}
	rows = append(rows, []string{"(unmatched)", "", fmt.Sprint(res.Unmatched), "", "", "", ""},
		[]string{"(untransformable)", "", fmt.Sprint(res.Invalid), "", "", "", ""})
	if err := f.IOStreams.Table([]string{"DESTINATION", "ROUTES", "ITEMS", "EXISTS", "KEY OK", "EMPTY", "FAILING RULES"}, rows); err != nil {
		return err
	}
	for _, k := range res.UnmatchedSample {
		fmt.Fprintf(out, "  unmatched: %s\n", k)
	}
	for _, e := range res.InvalidSample {
		fmt.Fprintf(out, "  cannot transform: %s\n", e)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	if res.Ready {
		fmt.Fprintf(out, "\nReady: run `dynops migrate backfill` with the same --source and --routes.\n")
		return nil
	}
	fmt.Fprintf(out, "\nNot ready:\n")
	for _, p := range res.Problems {
		fmt.Fprintf(out, "  - %s\n", p)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
