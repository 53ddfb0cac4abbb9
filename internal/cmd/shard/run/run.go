// Package run implements `dynops shard run`.
package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	exportshared "github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/shardrun"
	"github.com/dynops/dynops/internal/tablediff"
)

// Stages of a sharded diff.
const (
	StageMap    = "map"
	StageReduce = "reduce"
)

// Options of `dynops shard run`.
type Options struct {
	// Run is the run's s3://BUCKET/PREFIX/RUN-ID.
	Run   string
	Stage string
	// Shard is --shard I/N; empty: the engine's index variable with Shards.
	Shard   string
	Shards  int
	TempDir string
	// Getenv reads the engine's index variable (os.Getenv).
	Getenv func(string) string
}

// NewCmdRun returns `dynops shard run`. runF replaces the run function in tests of flag parsing.
func NewCmdRun(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "run --run s3://BUCKET/PREFIX/RUN-ID --stage map|reduce (--shard I/N | --shards N)",
		Short: "Run one shard of a sharded table diff's map or reduce stage",
		Long: `Run runs one shard of a stage of a sharded ` + "`dynops table diff --engine`" + ` run,
as the engine does: the run's plan (plan.json under --run) says what each
shard reads. A map shard reads its Scan segments and export data files and
writes its key-hash buckets; a reduce shard compares its buckets of both
sides. Every output is one S3 object written whole, the marker last: a shard
run again, or twice at once, writes the same bytes.

The shard is --shard I/N, or the engine's index (AWS_BATCH_JOB_ARRAY_INDEX,
JOB_COMPLETION_INDEX) with --shards N. Tables are only read.`,
		Example: `  dynops shard run --run s3://ops-bucket/diff-runs/diff-20261129t0100z --stage map --shard 0/4
  AWS_BATCH_JOB_ARRAY_INDEX=3 dynops shard run --run s3://ops-bucket/diff-runs/diff-20261129t0100z --stage reduce --shards 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Run == "" {
				return factory.UsageErrorf("shard run needs --run s3://BUCKET/PREFIX/RUN-ID (as table diff --engine prints it)")
			}
			if opts.Stage != StageMap && opts.Stage != StageReduce {
				return factory.UsageErrorf("--stage %q: use %s or %s", opts.Stage, StageMap, StageReduce)
			}
			if _, err := engine.ShardFrom(opts.Shard, opts.Shards, opts.Getenv); err != nil {
				return factory.UsageErrorf("%w", err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Run, "run", "", "the run: s3://BUCKET/PREFIX/RUN-ID")
	fl.StringVar(&opts.Stage, "stage", "", "map or reduce")
	fl.StringVar(&opts.Shard, "shard", "", "this shard, I/N (0 <= I < N); default: the engine's index variable")
	fl.IntVar(&opts.Shards, "shards", 0, "the stage's shard count, with the engine's index variable")
	flagcheck.Range(fl, "shards", "0", "10000", "0: from --shard")
	fl.StringVar(&opts.TempDir, "temp-dir", "", "where the shard's spill buckets go (default: the system temp dir)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetInterrupt(cmd, "no table was changed; the shard's S3 objects written so far stay under --run and are written again with the same bytes: run the same shard again")
	cmdfacts.SetTimeout(cmd, time.Minute)
	cmdfacts.SetTargets(cmd, "run")
	return cmd
}

// Run runs the shard.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	sh, err := engine.ShardFrom(opts.Shard, opts.Shards, opts.Getenv)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	run, err := shardrun.Open(clients.S3(), opts.Run)
	if err != nil {
		return factory.UsageErrorf("--run: %w", err)
	}
	p, err := tablediff.ReadPlan(ctx, run)
	if err != nil {
		return err
	}
	if sh.Count != p.Shards {
		return factory.UsageErrorf("shard %s, but the plan %s has %d shards: give --shard I/%d", sh, run.Where(tablediff.PlanName), p.Shards, p.Shards)
	}
	detail := map[string]any{"run": run.URI(), "stage": opts.Stage, "shard": sh.String()}
	start := time.Now()
	if opts.Stage == StageReduce {
		if err := tablediff.ReduceShard(ctx, run, p, sh, opts.TempDir); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("reduce shard %s of %s: %w", sh, run.URI(), err)
		}
		f.Audit.Act(audit.ActShardStage, run.URI(), detail)
		fmt.Fprintf(f.IOStreams.ErrOut, "reduce shard %s of %s: done in %s\n", sh, run.URI(), time.Since(start).Round(time.Millisecond))
		return nil
	}
	done, err := mapShard(ctx, f, clients, run, p, sh, opts.TempDir)
	if err != nil {
		return err
	}
	detail["items"] = done.Items
	f.Audit.Act(audit.ActShardStage, run.URI(), detail)
	fmt.Fprintf(f.IOStreams.ErrOut, "map shard %s of %s: %d source and %d target items in %s\n",
		sh, run.URI(), done.Items["source"], done.Items["target"], time.Since(start).Round(time.Millisecond))
	return nil
}

// mapShard runs map shard sh of plan p, each table's Scans held to the
// shard's part of its read budget, and audits the items read and the
// units used.
func mapShard(ctx context.Context, f *factory.Factory, clients awsclients.Set, run *shardrun.Run, p *tablediff.Plan, sh engine.Shard, tempDir string) (*tablediff.MapDone, error) {
	db := clients.DynamoDB()
	buckets := map[string]*capacity.Bucket{}
	for _, side := range []tablediff.PlanSide{p.Source, p.Target} {
		if side.Table != "" && side.ReadUnitsPerShard > 0 {
			b, err := capacity.NewBucket(side.ReadUnitsPerShard, nil)
			if err != nil {
				return nil, err
			}
			buckets[side.Table] = b
		}
	}
	s3 := func() (exportverify.S3API, error) { return clients.S3(), nil }
	// Each shard vouches for the exports it reads, as the driver did
	// (exports can change between the plan and the shard).
	open := func(uri string) (*exportverify.Export, error) {
		ex, err := exportverify.OpenExport(uri, s3)
		if err != nil {
			return nil, err
		}
		if _, _, err := exportshared.VouchExport(ctx, f, clients, ex, exportverify.Expect{AnyTable: true}, p.Unverified, uri); err != nil {
			return nil, err
		}
		return ex, nil
	}
	done, err := tablediff.MapShard(ctx, struct {
		tablediff.Describer
		capacity.Scanner
	}{db, capacity.Scans(db, buckets)}, run, p, sh, open, tempDir)
	if err != nil {
		return nil, fmt.Errorf("map shard %s of %s: %w", sh, run.URI(), err)
	}
	counts := map[string]int64{"source_items": done.Items["source"], "target_items": done.Items["target"]}
	for table, b := range buckets {
		counts["read_units_"+table] = int64(math.Ceil(b.Usage().Used))
	}
	f.Audit.Counts(counts)
	return done, nil
}
