// Package verify implements `dynops migrate verify`.
package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate verify`.
type Options struct {
	shared.Flags
	budget.Budgets
	Segments int
	Sample   int
	TempDir  string
	// Shard is --shard I/N: compare only the keys of that shard ("": all).
	Shard string
	shard engine.Shard
	// Combine are --combine FILE: the -o json results of the N shards,
	// added up into the one verify's (no table is read).
	Combine []string
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
catch-up with no writes, or in the cutover, which fences writes first).

--shard I/N compares only the keys whose key hash (primary key and
destination table) mod N is I, with 1/N of each read budget; each shard
still reads every table whole. --combine FILE (repeatable; the -o json
results of all N shards, each once) adds them up into the one verify's
result and verdict, reading no table.`,
		Example: `  dynops migrate verify --source dev-aiagent-single --routes routes.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if opts.Shard != "" {
				sh, err := engine.ParseShard(opts.Shard)
				if err != nil {
					return factory.UsageErrorf("%w", err)
				}
				opts.shard = sh
			}
			if opts.Shard != "" && len(opts.Combine) > 0 {
				return factory.UsageErrorf("--combine adds up the results of every shard: give it without --shard")
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
	fl.StringVar(&opts.Shard, "shard", "", "I/N: compare only the keys whose key hash mod N is I (each shard reads every table; the read budgets are split evenly)")
	fl.StringArrayVar(&opts.Combine, "combine", nil, "FILE: a shard's -o json result (repeatable, every shard once): add them up into the one verify's result, reading no table")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// result is the verify's JSON document: the result and the read budgets used.
type result struct {
	*migrate.VerifyResult
	Capacity []capacity.Use `json:"capacity"`
}

// Run verifies (or combines shards' results) and shows the result; exit 1
// on differences.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	l, err := shared.Load(&opts.Flags, false)
	if err != nil {
		return err
	}
	var res result
	if len(opts.Combine) > 0 {
		res, err = combine(opts)
	} else {
		res, err = verify(ctx, f, opts, l)
	}
	if err != nil {
		return err
	}
	if err := view.Results(f, func(r result) error { Print(f, r.VerifyResult); return nil }).Show(res); err != nil {
		return err
	}
	if res.Differences() > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// verify reads the tables (of a shard, with --shard) under the read budgets.
func verify(ctx context.Context, f *factory.Factory, opts *Options, l *shared.Loaded) (result, error) {
	c, err := shared.Clients(ctx, f)
	if err != nil {
		return result{}, err
	}
	budgets := opts.Budgets.Split(opts.shard.Count)
	if err := shared.Hold(ctx, f, budgets, &c, append([]string{opts.Source}, l.Input.Routes.Tables()...), nil); err != nil {
		return result{}, err
	}
	defer budgets.Record(f)
	res, err := migrate.Verify(ctx, c.DB, migrate.VerifyOptions{Input: l.Input, Segments: opts.Segments, SampleSize: opts.Sample, TempDir: opts.TempDir, Shard: opts.shard})
	if err != nil {
		return result{}, err
	}
	return result{VerifyResult: res, Capacity: budgets.Uses()}, nil
}

// combine reads the shards' results and adds them up.
func combine(opts *Options) (result, error) {
	var rs []*migrate.VerifyResult
	var uses []capacity.Use
	for _, path := range opts.Combine {
		b, err := os.ReadFile(path)
		if err != nil {
			return result{}, factory.UsageErrorf("--combine %s: %w", path, err)
		}
		var r result
		if err := json.Unmarshal(b, &r); err != nil || r.VerifyResult == nil || r.Report == nil {
			return result{}, factory.UsageErrorf("--combine %s: not the -o json result of `dynops migrate verify --shard I/N` (%v)", path, err)
		}
		if r.Source != opts.Source {
			return result{}, factory.UsageErrorf("--combine %s: a verify of %s, not of --source %s", path, r.Source, opts.Source)
		}
		rs, uses = append(rs, r.VerifyResult), append(uses, r.Capacity...)
	}
	res, err := migrate.CombineVerify(rs, opts.Sample)
	if err != nil {
		return result{}, factory.UsageErrorf("%w", err)
	}
	return result{VerifyResult: res, Capacity: uses}, nil
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
