// Package batch is the AWS Batch engine of sharded runs (engine.Engine): a
// stage of N shards is one array job of size N on a Fargate job queue
// (modules/dynops-batch), each child running the stage's dynops command line
// with --shards N and reading its index from AWS_BATCH_JOB_ARRAY_INDEX; a
// stage of one shard is a plain job with --shard 0/1, since Batch arrays hold
// 2 to 10,000 children. A later stage depends on the whole earlier job (a
// plain dependency, not N_TO_N: reduce needs every map shard done). Batch
// places, retries and scales the shards; dynops only submits, follows and
// cancels.
package batch

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsbatch "github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/dynops/dynops/internal/engine"
)

// Name is the engine's name as --engine takes it.
const Name = "batch"

// MaxShards is the largest array job AWS Batch accepts (arrayProperties.size
// is 2 to 10,000; one shard is submitted as a plain job).
const MaxShards = 10000

// API is the part of the AWS Batch client the engine calls
// (*batch.Client from awsclients.Set.Batch).
type API interface {
	SubmitJob(ctx context.Context, in *awsbatch.SubmitJobInput, optFns ...func(*awsbatch.Options)) (*awsbatch.SubmitJobOutput, error)
	DescribeJobs(ctx context.Context, in *awsbatch.DescribeJobsInput, optFns ...func(*awsbatch.Options)) (*awsbatch.DescribeJobsOutput, error)
	TerminateJob(ctx context.Context, in *awsbatch.TerminateJobInput, optFns ...func(*awsbatch.Options)) (*awsbatch.TerminateJobOutput, error)
	ListJobs(ctx context.Context, in *awsbatch.ListJobsInput, optFns ...func(*awsbatch.Options)) (*awsbatch.ListJobsOutput, error)
}

// Options name where the shards run: the job queue and the worker's job
// definition (modules/dynops-batch outputs job_queue_arn and
// job_definition_arn), and tags every submitted job carries.
type Options struct {
	// Queue is the job queue's name or ARN.
	Queue string
	// JobDefinition is the job definition's name, name:revision or ARN.
	JobDefinition string
	// Tags are added to every job (besides dynops:run and dynops:stage).
	Tags map[string]string
}

// Engine submits stages as AWS Batch jobs.
type Engine struct {
	api  API
	opts Options
}

// New returns the Batch engine over api; Queue and JobDefinition are required.
func New(api API, o Options) (*Engine, error) {
	var missing []string
	if strings.TrimSpace(o.Queue) == "" {
		missing = append(missing, "a job queue (modules/dynops-batch output job_queue_arn)")
	}
	if strings.TrimSpace(o.JobDefinition) == "" {
		missing = append(missing, "a job definition (modules/dynops-batch output job_definition_arn)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the batch engine needs %s", strings.Join(missing, " and "))
	}
	return &Engine{api: api, opts: o}, nil
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// Job is a submitted Batch job: an array parent, or a plain job for one shard.
type Job struct {
	JobID, JobName string
	Shards         int
}

// ID implements engine.Job: the Batch job ID.
func (j Job) ID() string { return j.JobID }

// Command is the container command of a stage's shards: dynops, the stage's
// arguments, then --shards N (each child reads its index from
// AWS_BATCH_JOB_ARRAY_INDEX) or --shard 0/1 for a single shard (a plain job
// has no array index).
func Command(s engine.Stage) ([]string, error) {
	if s.Shards < 1 || s.Shards > MaxShards {
		return nil, fmt.Errorf("stage %q: %d shards: AWS Batch runs 1 to %d (an array job holds 2 to %d children; one shard is a plain job)", s.Name, s.Shards, MaxShards, MaxShards)
	}
	if len(s.Args) == 0 {
		return nil, fmt.Errorf("stage %q has no dynops command line", s.Name)
	}
	for _, a := range s.Args {
		name, _, _ := strings.Cut(a, "=")
		if name == "--shard" || name == "--shards" {
			return nil, fmt.Errorf("stage %q: its arguments already hold %s: the engine gives each shard its identity, leave it out of the stage's arguments", s.Name, name)
		}
	}
	cmd := append([]string{"dynops"}, s.Args...)
	if s.Shards == 1 {
		return append(cmd, "--shard", engine.Shard{Index: 0, Count: 1}.String()), nil
	}
	return append(cmd, "--shards", strconv.Itoa(s.Shards)), nil
}

// RunID is the last segment of the stage's --run s3://BUCKET/PREFIX/RUN-ID.
func RunID(s engine.Stage) (string, error) {
	for i, a := range s.Args {
		v, ok := "", false
		switch {
		case a == "--run" && i+1 < len(s.Args):
			v, ok = s.Args[i+1], true
		case strings.HasPrefix(a, "--run="):
			v, ok = strings.TrimPrefix(a, "--run="), true
		}
		if !ok {
			continue
		}
		v = strings.TrimRight(v, "/")
		if !strings.HasPrefix(v, "s3://") || strings.Count(v, "/") < 3 {
			return "", fmt.Errorf("stage %q: --run %q: want s3://BUCKET/PREFIX/RUN-ID", s.Name, v)
		}
		return v[strings.LastIndex(v, "/")+1:], nil
	}
	return "", fmt.Errorf("stage %q: its arguments have no --run s3://BUCKET/PREFIX/RUN-ID, which names the Batch job", s.Name)
}

var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// JobName is "dynops-<run ID>-<stage>": letters, digits, hyphens and
// underscores, at most 128 characters, starting with a letter (SubmitJob's
// jobName).
func JobName(runID, stage string) string {
	clean := func(s string) string { return strings.Trim(notInName.ReplaceAllString(s, "-"), "-") }
	suffix := "-" + clean(stage)
	if suffix == "-" {
		suffix = ""
	}
	name := "dynops-" + clean(runID)
	if limit := 128 - len(suffix); len(name) > limit {
		name = name[:limit]
	}
	return name + suffix
}

// Submit implements engine.Engine: SubmitJob of the stage, an array job of
// s.Shards children (a plain job for one), depending on after's whole job;
// refused while a job of the same run and stage has not ended.
func (e *Engine) Submit(ctx context.Context, s engine.Stage, after engine.Job) (engine.Job, error) {
	cmd, err := Command(s)
	if err != nil {
		return nil, err
	}
	runID, err := RunID(s)
	if err != nil {
		return nil, err
	}
	name := JobName(runID, s.Name)
	if err := e.refuseLiveJob(ctx, s.Name, name); err != nil {
		return nil, err
	}
	in := &awsbatch.SubmitJobInput{
		JobName:            aws.String(name),
		JobQueue:           aws.String(e.opts.Queue),
		JobDefinition:      aws.String(e.opts.JobDefinition),
		ContainerOverrides: &types.ContainerOverrides{Command: cmd},
		Tags:               e.tags(runID, s),
	}
	if s.Shards > 1 {
		in.ArrayProperties = &types.ArrayProperties{Size: aws.Int32(int32(s.Shards))}
	}
	if after != nil {
		prev, ok := after.(Job)
		if !ok {
			return nil, fmt.Errorf("stage %q: it must run after job %s, which is not an AWS Batch job", s.Name, after.ID())
		}
		// A plain dependency: the whole earlier job (every child of an
		// array) must succeed first. N_TO_N would start reduce shard i
		// after map shard i only.
		in.DependsOn = []types.JobDependency{{JobId: aws.String(prev.JobID)}}
	}
	out, err := e.api.SubmitJob(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("submitting stage %q (%d shards) to AWS Batch queue %s with job definition %s: %w", s.Name, s.Shards, e.opts.Queue, e.opts.JobDefinition, err)
	}
	if out.JobId == nil || *out.JobId == "" {
		return nil, fmt.Errorf("submitting stage %q to AWS Batch queue %s: the answer has no job ID", s.Name, e.opts.Queue)
	}
	return Job{JobID: *out.JobId, JobName: aws.ToString(out.JobName), Shards: s.Shards}, nil
}

// refuseLiveJob refuses to submit a stage while a job of the same name (the
// same run and stage) has not ended in the queue: a driver that stopped
// without cancelling its jobs (SIGKILL, a lost machine) left it running, and
// a second one would run every shard again (the same outputs, twice the
// cost) while only the new one is followed and cancelled.
func (e *Engine) refuseLiveJob(ctx context.Context, stage, name string) error {
	p := awsbatch.NewListJobsPaginator(e.api, &awsbatch.ListJobsInput{
		JobQueue: aws.String(e.opts.Queue),
		Filters:  []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{name}}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("stage %q: listing AWS Batch jobs named %s in queue %s (a run's stage is submitted once): %w", stage, name, e.opts.Queue, err)
		}
		for _, j := range page.JobSummaryList {
			if !strings.EqualFold(aws.ToString(j.JobName), name) {
				continue
			}
			switch j.Status {
			case types.JobStatusSucceeded, types.JobStatusFailed:
				continue
			}
			id := aws.ToString(j.JobId)
			return fmt.Errorf("stage %q: AWS Batch job %s (%s) of this run is still %s in queue %s, left by a run that stopped without cancelling it; wait until it ends, or stop it with `aws batch terminate-job --job-id %s --reason REASON`, then run again (finished shards' outputs are kept)",
				stage, id, name, j.Status, e.opts.Queue, id)
		}
	}
	return nil
}

func (e *Engine) tags(runID string, s engine.Stage) map[string]string {
	t := make(map[string]string, len(e.opts.Tags)+3)
	for k, v := range e.opts.Tags {
		t[k] = v
	}
	t["dynops:run"] = runID
	t["dynops:stage"] = s.Name
	t["dynops:shards"] = strconv.Itoa(s.Shards)
	return t
}

// Status implements engine.Engine: DescribeJobs of the job; an array
// parent's children are counted from arrayProperties.statusSummary.
func (e *Engine) Status(ctx context.Context, j engine.Job) (engine.Status, error) {
	out, err := e.api.DescribeJobs(ctx, &awsbatch.DescribeJobsInput{Jobs: []string{j.ID()}})
	if err != nil {
		return engine.Status{}, fmt.Errorf("describing AWS Batch job %s: %w", j.ID(), err)
	}
	for _, d := range out.Jobs {
		if aws.ToString(d.JobId) == j.ID() {
			return statusOf(d), nil
		}
	}
	return engine.Status{}, fmt.Errorf("AWS Batch job %s was not found in %s (DescribeJobs answered without it): was it submitted in another region or account?", j.ID(), e.opts.Queue)
}

// statusOf counts a job's shards. A parent is done when Batch says it ended,
// or when its summary counts every child ended (the summary can run ahead of
// the parent's own status). A job that failed with no failed child counted
// (a failed dependency, a cancellation before any child started) counts its
// unfinished shards as failed, so Wait never reads it as a success.
func statusOf(d types.JobDetail) engine.Status {
	var st engine.Status
	size := 1
	if ap := d.ArrayProperties; ap != nil && ap.Size != nil && *ap.Size > 0 {
		size = int(*ap.Size)
		for k, n := range ap.StatusSummary {
			add(&st, types.JobStatus(k), int(n))
		}
	} else {
		add(&st, d.Status, 1)
	}
	switch d.Status {
	case types.JobStatusSucceeded:
		st.Done = true
		if st.Succeeded+st.Failed < size { // the summary lags
			st.Succeeded = size - st.Failed
			st.Running, st.Pending = 0, 0
		}
	case types.JobStatusFailed:
		st.Done = true
		if st.Failed == 0 || st.Succeeded+st.Failed < size {
			st.Failed = size - st.Succeeded
			st.Running, st.Pending = 0, 0
		}
	default:
		st.Done = size > 1 && st.Succeeded+st.Failed == size
	}
	return st
}

func add(st *engine.Status, s types.JobStatus, n int) {
	switch s {
	case types.JobStatusSucceeded:
		st.Succeeded += n
	case types.JobStatusFailed:
		st.Failed += n
	case types.JobStatusStarting, types.JobStatusRunning:
		st.Running += n
	case types.JobStatusSubmitted, types.JobStatusPending, types.JobStatusRunnable:
		st.Pending += n
	}
}

// Cancel implements engine.Engine: TerminateJob with the reason. On an
// array parent it ends every child: running ones are stopped, those not yet
// started are cancelled; a job depending on it then fails.
func (e *Engine) Cancel(ctx context.Context, j engine.Job, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return errors.New("cancelling an AWS Batch job needs a reason (it is kept on the job as its status reason)")
	}
	if _, err := e.api.TerminateJob(ctx, &awsbatch.TerminateJobInput{JobId: aws.String(j.ID()), Reason: aws.String(reason)}); err != nil {
		return fmt.Errorf("terminating AWS Batch job %s: %w", j.ID(), err)
	}
	return nil
}

var _ engine.Engine = (*Engine)(nil)
