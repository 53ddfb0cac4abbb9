package diff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/engine/batch"
	"github.com/dynops/dynops/internal/safefile"
	"github.com/dynops/dynops/internal/shardrun"
	"github.com/dynops/dynops/internal/tablediff"
)

// Engines --engine takes.
const (
	EngineNone  = "none"
	EngineLocal = "local"
	EngineBatch = "batch"
)

// Sharded are the flags of a sharded diff (docs/scale.md).
type Sharded struct {
	Engine    string
	Shards    int
	RunPrefix string
	RunID     string
	// BatchQueue and BatchJobDefinition are modules/dynops-batch's
	// job_queue_arn and job_definition_arn (--engine batch).
	BatchQueue, BatchJobDefinition string
	// PollEvery is how often the engine is asked for the shards' status.
	PollEvery time.Duration
}

func (s *Sharded) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&s.Engine, "engine", EngineNone, "run the diff as shards on an engine: none (this process), local (a process per shard) or batch (an AWS Batch array job per stage, modules/dynops-batch), with --shards and --run-prefix")
	fl.IntVar(&s.Shards, "shards", 1, "shards of each stage, with --engine")
	flagcheck.Range(fl, "shards", "1", "10000", "shards of each stage")
	fl.StringVar(&s.RunPrefix, "run-prefix", "", "with --engine: the S3 prefix the shards exchange their work through, s3://BUCKET/PREFIX (the run is PREFIX/RUN-ID/)")
	fl.StringVar(&s.BatchQueue, "batch-queue", "", "with --engine batch: the job queue (modules/dynops-batch output job_queue_arn)")
	fl.StringVar(&s.BatchJobDefinition, "batch-job-definition", "", "with --engine batch: the worker job definition (modules/dynops-batch output job_definition_arn)")
	fl.StringVar(&s.RunID, "run-id", "", "with --engine: the run's ID (default: diff-<audit run ID>); the same ID continues a run with the same plan")
}

func (s *Sharded) on() bool { return s.Engine != EngineNone }

// check refuses flags of a sharded run without an engine, and an engine
// without its run prefix.
func (s *Sharded) check(fl *pflag.FlagSet) error {
	switch s.Engine {
	case EngineNone:
		for _, name := range []string{"shards", "run-prefix", "run-id", "batch-queue", "batch-job-definition"} {
			if fl.Changed(name) {
				return factory.UsageErrorf("--%s is for a sharded run: add --engine %s (and --run-prefix s3://BUCKET/PREFIX), or leave --%s out", name, EngineLocal, name)
			}
		}
		return nil
	case EngineLocal:
		for _, name := range []string{"batch-queue", "batch-job-definition"} {
			if fl.Changed(name) {
				return factory.UsageErrorf("--%s is for --engine %s; the local engine runs the shards as processes here", name, EngineBatch)
			}
		}
	case EngineBatch:
		if s.BatchQueue == "" || s.BatchJobDefinition == "" {
			return factory.UsageErrorf("--engine %s needs --batch-queue and --batch-job-definition: the outputs job_queue_arn and job_definition_arn of modules/dynops-batch (docs/batch.md)", EngineBatch)
		}
	default:
		return factory.UsageErrorf("--engine %q: use %s, %s or %s", s.Engine, EngineNone, EngineLocal, EngineBatch)
	}
	if s.RunPrefix == "" {
		return factory.UsageErrorf("--engine %s needs --run-prefix s3://BUCKET/PREFIX: the shards exchange their work through S3", s.Engine)
	}
	if _, _, err := shardrun.ParsePrefix(s.RunPrefix); err != nil {
		return factory.UsageErrorf("--run-prefix: %w", err)
	}
	if s.RunID != "" {
		if err := shardrun.CheckID(s.RunID); err != nil {
			return factory.UsageErrorf("--run-id: %w", err)
		}
	}
	return nil
}

// runSharded plans the diff, writes the plan under the run's prefix, runs
// the map and reduce stages on the engine and collects the report.
func runSharded(ctx context.Context, f *factory.Factory, opts *Options) error {
	start := time.Now()
	sh := opts.Sharded
	if opts.Diff.KeysOut != "" {
		// refused now, not after the shards ran
		if err := safefile.CheckNew(opts.Diff.KeysOut, "keys file (--keys-out)", opts.Diff.KeysForce); err != nil {
			return err
		}
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	d, err := openSides(ctx, f, clients, opts)
	if err != nil {
		return err
	}
	if sh.RunID == "" {
		sh.RunID = "diff-" + f.Audit.RunID()
	}
	run, err := shardrun.New(clients.S3(), sh.RunPrefix, sh.RunID)
	if err != nil {
		return factory.UsageErrorf("--run-prefix/--run-id: %w", err)
	}
	budgets, _, err := readBudgets(ctx, clients, capacity.DescribeOnce(clients.DynamoDB()), d, opts)
	if err != nil {
		return err
	}
	v := newView(f)
	v.Budgets(budgets, sh.Shards)
	p, err := writePlan(ctx, f, clients.DynamoDB(), run, d, opts, sh, budgets)
	if err != nil {
		return err
	}
	v.ShardPlan(run.Where(tablediff.PlanName), p)
	if err := followStages(ctx, f, clients, sh, run, opts.Diff.TempDir); err != nil {
		return err
	}
	rep, err := tablediff.Collect(ctx, run, p, tablediff.CollectOptions{KeysOut: opts.Diff.KeysOut, KeysForce: opts.Diff.KeysForce, Now: f.Now})
	if err != nil {
		return err
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Seconds > 0 {
		rep.ItemsPerSec = float64(rep.SourceItems+rep.TargetItems) / rep.Seconds
	}
	// The shards held to their parts of the budgets and audited what they
	// used; this process read only the estimate's samples.
	for i := range budgets {
		budgets[i].Bucket = nil
	}
	return finish(f, v, opts, rep, budgets)
}

// writePlan plans the sharded diff with each shard's part of the budgets,
// writes the plan under the run (the same plan again continues a run; a
// different one is refused) and audits it.
func writePlan(ctx context.Context, f *factory.Factory, db tablediff.Describer, run *shardrun.Run, d tablediff.Options, opts *Options, sh Sharded, budgets []capacity.Use) (*tablediff.Plan, error) {
	p, err := tablediff.NewPlan(ctx, db, d, sh.Shards, run.URI(), f.Now())
	if err != nil {
		return nil, err
	}
	p.Unverified = opts.Unverified
	perShard := map[string]float64{}
	for _, b := range budgets {
		share, err := b.Split(sh.Shards)
		if err != nil {
			return nil, err
		}
		if share.Bucket != nil {
			perShard[b.Table] = share.UnitsPerSecond
		}
	}
	for _, side := range []*tablediff.PlanSide{&p.Source, &p.Target} {
		side.ReadUnitsPerShard = perShard[side.Table]
	}
	if p, err = tablediff.WritePlan(ctx, run, p); err != nil {
		if errors.Is(err, tablediff.ErrPlanDiffers) {
			return nil, factory.UsageErrorf("--run-id %s: %w", sh.RunID, err)
		}
		return nil, err
	}
	f.Audit.Act(audit.ActShardRun, run.URI(), map[string]any{"run": run.URI(), "run_id": run.ID, "engine": sh.Engine, "shards": sh.Shards,
		"buckets": p.Buckets, "read_units_per_shard": perShard, "estimate": p.Estimate})
	return p, nil
}

// followStages runs the map and then the reduce stage on the engine with a
// progress bar; an error says how to continue the run.
func followStages(ctx context.Context, f *factory.Factory, clients awsclients.Set, sh Sharded, run *shardrun.Run, tempDir string) error {
	eng, base, err := shardEngine(f, clients, sh, run.URI(), tempDir)
	if err != nil {
		return err
	}
	stages := []engine.Stage{
		{Name: "map", Args: append(append([]string{}, base...), "--stage", "map"), Shards: sh.Shards},
		{Name: "reduce", Args: append(append([]string{}, base...), "--stage", "reduce"), Shards: sh.Shards},
	}
	bar := f.IOStreams.StartProgress("table diff: shards done", int64(2*sh.Shards))
	every := sh.PollEvery
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	err = engine.RunStages(ctx, eng, stages, every, func(s engine.Stage, st engine.Status) {
		offset := 0
		if s.Name == "reduce" {
			offset = sh.Shards
		}
		bar.Set(int64(offset + st.Succeeded))
		bar.Status("%s: %d running, %d pending, %d failed", s.Name, st.Running, st.Pending, st.Failed)
	})
	bar.Done()
	if err == nil {
		return nil
	}
	cont := "continue it with the same command and --run-id " + run.ID + " (finished shards write the same objects again)"
	if ctx.Err() != nil {
		return fmt.Errorf("running %s on the %s engine: %w. The shards were stopped; the run's objects stay under %s: %s", run.URI(), sh.Engine, err, run.URI(), cont)
	}
	return fmt.Errorf("running %s on the %s engine: %w (each failed shard's error is printed above); %s, or run a shard alone with `dynops shard run --run %s --stage map|reduce --shard I/%d`",
		run.URI(), sh.Engine, err, cont, run.URI(), sh.Shards)
}

// shardEngine is the engine of --engine and the shards' common command line.
// A local shard shares this machine (its audit log, temp dir, profile); a
// Batch shard runs in a container of the team's account: it gets none of
// this machine's paths or profiles, its credentials are its job role's and
// its audit goes to the central copy (--audit-log-group) when set.
func shardEngine(f *factory.Factory, clients awsclients.Set, sh Sharded, runURI, tempDir string) (engine.Engine, []string, error) {
	base := []string{"shard", "run", "--run", runURI}
	switch sh.Engine {
	case EngineBatch:
		eng, err := batch.New(clients.Batch(), batch.Options{Queue: sh.BatchQueue, JobDefinition: sh.BatchJobDefinition})
		if err != nil {
			return nil, nil, factory.UsageErrorf("--engine batch: %w", err)
		}
		return eng, append(base, f.Flags.ContainerShardArgs()...), nil
	default:
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("finding the dynops binary for the local engine's shards: %w", err)
		}
		base = append(base, f.Flags.ShardArgs()...)
		if tempDir != "" {
			base = append(base, "--temp-dir", tempDir)
		}
		return engine.NewLocal(exe, f.IOStreams.ErrOut), base, nil
	}
}
