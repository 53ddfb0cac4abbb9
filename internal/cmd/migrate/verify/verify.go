// Package verify implements `dynops migrate verify`.
package verify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate verify`.
type Options struct {
	shared.Flags
	budget.Budgets
	Segments int
	Sample   int
	TempDir  string
}

// NewCmdVerify returns `dynops migrate verify`. runF replaces the run function in tests of flag parsing.
func NewCmdVerify(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "verify --source TABLE --routes FILE",
		Short: "Compare the routed source with the destinations; exit 1 on differences",
		Long: `Verify reads the source and every destination with parallel segmented Scans
(consistent reads), routes and transforms each source item, and compares the
two sides as ` + "`dynops table diff`" + ` does: each item becomes its key (primary key
plus destination table) and a checksum, spilled to on-disk buckets by key
hash, compared one bucket at a time, so memory stays bounded. The catch-up's
sequence attribute is ignored. It prints counts and sample keys of items only
in the source, only in the destinations (or in the wrong one) and changed.

Exit status 1 when there are differences. Run it at zero lag (after a
catch-up with no writes, or in the cutover, which fences writes first).`,
		Example: `  dynops migrate verify --source dev-aiagent-single --routes routes.yaml`,
		Args:    cobra.NoArgs,
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
	fl.IntVar(&opts.Segments, "segments", 4, "parallel Scan segments per table")
	opts.Budgets.AddFlags(cmd.Flags(), "each table scanned (the source and every destination)", "")
	flagcheck.Range(fl, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fl.IntVar(&opts.Sample, "sample", 10, "keys of each kind to list")
	flagcheck.Range(fl, "sample", "1", "", "at least 1 key of each kind")
	fl.StringVar(&opts.TempDir, "temp-dir", "", "where the spill buckets go (default: the system temp dir)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// Run verifies and prints the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, false)
	if err != nil {
		return err
	}
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return err
	}
	if err := shared.Hold(ctx, f, &opts.Budgets, &c, append([]string{opts.Source}, l.Input.Routes.Tables()...), nil); err != nil {
		return err
	}
	defer opts.Budgets.Record(f)
	res, err := migrate.Verify(ctx, c.DB, migrate.VerifyOptions{Input: l.Input, Segments: opts.Segments, SampleSize: opts.Sample, TempDir: opts.TempDir})
	if err != nil {
		return err
	}
	if f.JSON() {
		err = f.PrintResult(struct {
			*migrate.VerifyResult
			Capacity []capacity.Use `json:"capacity"`
		}{res, opts.Budgets.Uses()})
	} else {
		Print(f, res)
	}
	if err != nil {
		return err
	}
	if res.Differences() > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// Print prints a verify report.
func Print(f *factory.Factory, res *migrate.VerifyResult) {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "%s (%d items routed, %d unmatched and %d untransformable left behind) vs %s (%d items); %d buckets, %.0f items/s\n\n",
		res.Source, res.SourceItems, res.Unmatched, res.Untransformable, res.Target, res.TargetItems, res.Buckets, res.ItemsPerSec)
	rows := [][]string{
		{"same", fmt.Sprint(res.Same), ""},
		{"only in source", fmt.Sprint(res.OnlyInSource), sample(res.Sample.OnlyInSource)},
		{"only in destinations", fmt.Sprint(res.OnlyInTarget), sample(res.Sample.OnlyInTarget)},
		{"changed", fmt.Sprint(res.Changed), sample(res.Sample.Changed)},
	}
	_ = f.IOStreams.Table([]string{"KIND", "ITEMS", "SAMPLE KEYS"}, rows)
	if res.Differences() == 0 {
		fmt.Fprintf(out, "\n0 differences: the destinations hold the routed source.\n")
		return
	}
	fmt.Fprintf(out, "\n%d difference(s). If writes are still going on, run catch-up and verify again.\n", res.Differences())
}

func sample(keys []json.RawMessage) string {
	s := ""
	for i, k := range keys {
		if i == 3 {
			s += fmt.Sprintf(" ... (+%d)", len(keys)-3)
			break
		}
		if i > 0 {
			s += " "
		}
		s += string(k)
	}
	return s
}
