// Package engine runs the shards of a sharded dynops job on an engine that
// already knows how to schedule: local processes (for tests and one big
// machine), an AWS Batch array job, or a Kubernetes Indexed Job. dynops ships
// no scheduler, leases or cluster code: the engine places, retries and scales
// the shards; each shard is idempotent and writes its outputs atomically under
// the run's S3 prefix.
package engine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Shard is one shard of a run: Index in [0, Count).
type Shard struct {
	Index, Count int
}

// String is the --shard form, I/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads the --shard I/N form.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %q: want I/N, for example 0/4 (the first of four shards)", s)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil || cnt < 1 || idx < 0 || idx >= cnt {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 0 <= I < N, for example 0/4", s)
	}
	return Shard{Index: idx, Count: cnt}, nil
}

// The variables the engines set for a shard: AWS Batch sets the array index
// (the size is passed by dynops in the job's command as --shards), a
// Kubernetes Indexed Job sets the completion index.
const (
	EnvBatchIndex = "AWS_BATCH_JOB_ARRAY_INDEX"
	EnvK8sIndex   = "JOB_COMPLETION_INDEX"
)

// ShardFrom resolves the shard a process is: the --shard flag when given,
// else the engine's index variable with count shards. getenv is os.Getenv in
// production.
func ShardFrom(flag string, count int, getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if flag != "" {
		return ParseShard(flag)
	}
	for _, name := range []string{EnvBatchIndex, EnvK8sIndex} {
		v := getenv(name)
		if v == "" {
			continue
		}
		idx, err := strconv.Atoi(v)
		if err != nil || idx < 0 {
			return Shard{}, fmt.Errorf("%s=%q is not a shard index", name, v)
		}
		if count < 1 {
			return Shard{}, fmt.Errorf("%s=%s is set but the shard count is not: pass --shards N", name, v)
		}
		if idx >= count {
			return Shard{}, fmt.Errorf("%s=%d is outside --shards %d", name, idx, count)
		}
		return Shard{Index: idx, Count: count}, nil
	}
	return Shard{}, fmt.Errorf("no shard given: pass --shard I/N, or run under AWS Batch (%s) or a Kubernetes Indexed Job (%s)", EnvBatchIndex, EnvK8sIndex)
}

// Stage is one array of shards: every shard runs Args plus --shard I/N
// (local engine) or reads its index from the engine's variable.
type Stage struct {
	// Name is the stage (for example "map" or "reduce").
	Name string
	// Args is the dynops command line of every shard, without the binary.
	Args []string
	// Shards is the array size.
	Shards int
}

// Status is the progress of a submitted stage.
type Status struct {
	Succeeded, Failed, Running, Pending int
	// Done is true when every shard has ended (succeeded or failed for good).
	Done bool
}

// Job is a submitted stage.
type Job interface {
	// ID names the job on its engine (an AWS Batch job ID, a local run ID).
	ID() string
}

// Engine runs stages of shards.
type Engine interface {
	// Name is the engine's name as --engine takes it.
	Name() string
	// Submit starts a stage; after, when non-nil, must succeed first.
	Submit(ctx context.Context, s Stage, after Job) (Job, error)
	// Status reports a submitted stage.
	Status(ctx context.Context, j Job) (Status, error)
	// Cancel stops a stage's shards (Ctrl-C).
	Cancel(ctx context.Context, j Job, reason string) error
}

// Wait polls j until it is done, calling progress with each status. A stage
// with failed shards is an error naming how many.
func Wait(ctx context.Context, e Engine, j Job, every time.Duration, progress func(Status)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		st, err := e.Status(ctx, j)
		if err != nil {
			return fmt.Errorf("status of %s job %s: %w", e.Name(), j.ID(), err)
		}
		if progress != nil {
			progress(st)
		}
		if st.Done {
			if st.Failed > 0 {
				return fmt.Errorf("%s job %s: %d shard(s) failed", e.Name(), j.ID(), st.Failed)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
