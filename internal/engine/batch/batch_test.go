package batch

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsbatch "github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/dynops/dynops/internal/engine"
)

// fakeAPI records the engine's calls at the SDK interface and answers
// DescribeJobs with jobs: the decisions the emulator cannot reach (an array
// parent that failed by its dependency, a summary that lags its parent;
// moto 5.2.1 never moves an array parent out of SUBMITTED).
type fakeAPI struct {
	submitted  []*awsbatch.SubmitJobInput
	terminated []*awsbatch.TerminateJobInput
	jobs       []types.JobDetail
	// listed answers ListJobs, one page per element.
	listed [][]types.JobSummary
	lists  []*awsbatch.ListJobsInput
}

func (f *fakeAPI) ListJobs(_ context.Context, in *awsbatch.ListJobsInput, _ ...func(*awsbatch.Options)) (*awsbatch.ListJobsOutput, error) {
	f.lists = append(f.lists, in)
	page := 0
	if in.NextToken != nil {
		page, _ = strconv.Atoi(*in.NextToken)
	}
	out := &awsbatch.ListJobsOutput{}
	if page < len(f.listed) {
		out.JobSummaryList = f.listed[page]
	}
	if page+1 < len(f.listed) {
		out.NextToken = aws.String(strconv.Itoa(page + 1))
	}
	return out, nil
}

func (f *fakeAPI) SubmitJob(_ context.Context, in *awsbatch.SubmitJobInput, _ ...func(*awsbatch.Options)) (*awsbatch.SubmitJobOutput, error) {
	f.submitted = append(f.submitted, in)
	return &awsbatch.SubmitJobOutput{JobId: aws.String("job-" + aws.ToString(in.JobName)), JobName: in.JobName}, nil
}

func (f *fakeAPI) DescribeJobs(_ context.Context, in *awsbatch.DescribeJobsInput, _ ...func(*awsbatch.Options)) (*awsbatch.DescribeJobsOutput, error) {
	return &awsbatch.DescribeJobsOutput{Jobs: f.jobs}, nil
}

func (f *fakeAPI) TerminateJob(_ context.Context, in *awsbatch.TerminateJobInput, _ ...func(*awsbatch.Options)) (*awsbatch.TerminateJobOutput, error) {
	f.terminated = append(f.terminated, in)
	return &awsbatch.TerminateJobOutput{}, nil
}

func newFake(t *testing.T) (*Engine, *fakeAPI) {
	t.Helper()
	f := &fakeAPI{}
	e, err := New(f, Options{Queue: "dynops-batch", JobDefinition: "dynops-batch-worker", Tags: map[string]string{"team": "db"}})
	if err != nil {
		t.Fatal(err)
	}
	return e, f
}

const run = "s3://hoge-runs/diff/20261129T0100Z-a1b2"

func mapStage(n int) engine.Stage {
	return engine.Stage{Name: "map", Args: []string{"shard", "run", "--run", run, "--stage", "map"}, Shards: n}
}

// TestSubmitArrayJobAfterTheWholeMap_FakeBatchAPI: a stage of 4 shards is
// an array job of size 4 whose children run dynops with --shards 4; the
// reduce stage depends on the map job's ID with no N_TO_N type (every map
// child must end first); names and tags come from the run ID.
func TestSubmitArrayJobAfterTheWholeMap_FakeBatchAPI(t *testing.T) {
	e, f := newFake(t)
	m, err := e.Submit(t.Context(), mapStage(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	reduce := engine.Stage{Name: "reduce", Args: []string{"shard", "run", "--run=" + run, "--stage", "reduce"}, Shards: 4}
	if _, err := e.Submit(t.Context(), reduce, m); err != nil {
		t.Fatal(err)
	}
	if len(f.submitted) != 2 {
		t.Fatalf("%d SubmitJob calls, want 2", len(f.submitted))
	}
	in := f.submitted[0]
	if in.ArrayProperties == nil || aws.ToInt32(in.ArrayProperties.Size) != 4 {
		t.Errorf("map: arrayProperties %+v, want size 4", in.ArrayProperties)
	}
	want := []string{"dynops", "shard", "run", "--run", run, "--stage", "map", "--shards", "4"}
	if !slices.Equal(in.ContainerOverrides.Command, want) {
		t.Errorf("map command %q, want %q", in.ContainerOverrides.Command, want)
	}
	if got := aws.ToString(in.JobName); got != "dynops-20261129T0100Z-a1b2-map" {
		t.Errorf("job name %q", got)
	}
	if aws.ToString(in.JobQueue) != "dynops-batch" || aws.ToString(in.JobDefinition) != "dynops-batch-worker" {
		t.Errorf("queue %q, definition %q", aws.ToString(in.JobQueue), aws.ToString(in.JobDefinition))
	}
	if in.Tags["dynops:run"] != "20261129T0100Z-a1b2" || in.Tags["dynops:stage"] != "map" || in.Tags["dynops:shards"] != "4" || in.Tags["team"] != "db" {
		t.Errorf("tags %v", in.Tags)
	}
	if len(in.DependsOn) != 0 {
		t.Errorf("map depends on %v", in.DependsOn)
	}
	r := f.submitted[1]
	if len(r.DependsOn) != 1 || aws.ToString(r.DependsOn[0].JobId) != m.ID() || r.DependsOn[0].Type != "" {
		t.Errorf("reduce dependsOn %+v, want the map job %s with no type (not N_TO_N)", r.DependsOn, m.ID())
	}
}

// TestSubmitOneShardAsAPlainJob_FakeBatchAPI: Batch arrays hold 2 to
// 10,000 children, so one shard is a plain job told --shard 0/1 (a plain job
// has no AWS_BATCH_JOB_ARRAY_INDEX).
func TestSubmitOneShardAsAPlainJob_FakeBatchAPI(t *testing.T) {
	e, f := newFake(t)
	if _, err := e.Submit(t.Context(), mapStage(1), nil); err != nil {
		t.Fatal(err)
	}
	in := f.submitted[0]
	if in.ArrayProperties != nil {
		t.Errorf("one shard submitted with arrayProperties %+v", in.ArrayProperties)
	}
	cmd := in.ContainerOverrides.Command
	if got := strings.Join(cmd[len(cmd)-2:], " "); got != "--shard 0/1" {
		t.Errorf("command ends %q, want --shard 0/1", got)
	}
	if s, err := engine.ShardFrom(cmd[len(cmd)-1], 0, func(string) string { return "" }); err != nil || s != (engine.Shard{Index: 0, Count: 1}) {
		t.Errorf("the plain job's shard reads as %v, %v", s, err)
	}
}

// TestSubmitRefusals_FakeBatchAPI: what the engine refuses before any call.
func TestSubmitRefusals_FakeBatchAPI(t *testing.T) {
	e, f := newFake(t)
	withArgs := func(args ...string) engine.Stage { return engine.Stage{Name: "map", Args: args, Shards: 2} }
	for _, c := range []struct {
		name  string
		stage engine.Stage
		after engine.Job
		want  string
	}{
		{"no shards", mapStage(0), nil, "0 shards"},
		{"more than an array holds", mapStage(MaxShards + 1), nil, "1 to 10000"},
		{"shard identity in the arguments", withArgs("shard", "run", "--run", run, "--shards", "2"), nil, "--shards"},
		{"--shard= in the arguments", withArgs("shard", "run", "--run", run, "--shard=0/2"), nil, "--shard"},
		{"no --run", withArgs("shard", "run", "--stage", "map"), nil, "no --run"},
		{"--run not in S3", withArgs("shard", "run", "--run", "/tmp/run"), nil, "s3://BUCKET/PREFIX/RUN-ID"},
		{"no arguments", engine.Stage{Name: "map", Shards: 2}, nil, "no dynops command line"},
		{"after a job of another engine", mapStage(2), otherJob("local-1"), "not an AWS Batch job"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Submit(t.Context(), c.stage, c.after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
		})
	}
	if len(f.submitted) != 0 {
		t.Errorf("%d jobs submitted by refused stages", len(f.submitted))
	}
}

type otherJob string

func (o otherJob) ID() string { return string(o) }

func TestNewNeedsQueueAndDefinition(t *testing.T) {
	_, err := New(&fakeAPI{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "job queue") || !strings.Contains(err.Error(), "job definition") {
		t.Fatalf("err %v, want both named", err)
	}
}

// TestStatusCounts_FakeBatchAPI: shards counted from an array parent's
// statusSummary, or from a plain job's status; a failed job always counts a
// failed shard, so engine.Wait cannot read it as a success.
func TestStatusCounts_FakeBatchAPI(t *testing.T) {
	array := func(status types.JobStatus, size int32, summary map[string]int32) types.JobDetail {
		return types.JobDetail{JobId: aws.String("j"), Status: status, ArrayProperties: &types.ArrayPropertiesDetail{Size: aws.Int32(size), StatusSummary: summary}}
	}
	plain := func(status types.JobStatus) types.JobDetail {
		return types.JobDetail{JobId: aws.String("j"), Status: status}
	}
	for _, c := range []struct {
		name string
		job  types.JobDetail
		want engine.Status
	}{
		{"array under way", array("PENDING", 5, map[string]int32{"RUNNABLE": 1, "STARTING": 1, "RUNNING": 1, "SUCCEEDED": 1, "FAILED": 1}),
			engine.Status{Succeeded: 1, Failed: 1, Running: 2, Pending: 1}},
		{"array succeeded, summary lagging", array("SUCCEEDED", 4, map[string]int32{"SUCCEEDED": 2, "RUNNING": 2}),
			engine.Status{Succeeded: 4, Done: true}},
		{"array failed by its dependency, no child ran", array("FAILED", 4, nil),
			engine.Status{Failed: 4, Done: true}},
		{"array failed, one child failed, others cancelled", array("FAILED", 4, map[string]int32{"SUCCEEDED": 1, "FAILED": 1, "RUNNING": 2}),
			engine.Status{Succeeded: 1, Failed: 3, Done: true}},
		{"every child ended, parent not yet (moto keeps SUBMITTED)", array("SUBMITTED", 3, map[string]int32{"FAILED": 3}),
			engine.Status{Failed: 3, Done: true}},
		{"plain job waiting", plain("RUNNABLE"), engine.Status{Pending: 1}},
		{"plain job running", plain("STARTING"), engine.Status{Running: 1}},
		{"plain job succeeded", plain("SUCCEEDED"), engine.Status{Succeeded: 1, Done: true}},
		{"plain job failed", plain("FAILED"), engine.Status{Failed: 1, Done: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, f := newFake(t)
			f.jobs = []types.JobDetail{c.job}
			got, err := e.Status(t.Context(), Job{JobID: "j"})
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestWaitFailsOnAFailedParent_FakeBatchAPI: engine.Wait over the Batch
// engine ends with an error naming the failed shards of a parent that failed
// before any child ran.
func TestWaitFailsOnAFailedParent_FakeBatchAPI(t *testing.T) {
	e, f := newFake(t)
	f.jobs = []types.JobDetail{{JobId: aws.String("j"), Status: "FAILED", ArrayProperties: &types.ArrayPropertiesDetail{Size: aws.Int32(8)}}}
	err := engine.Wait(t.Context(), e, Job{JobID: "j"}, time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "8 shard(s) failed") {
		t.Fatalf("Wait: %v, want 8 failed shards", err)
	}
}

func TestStatusOfAMissingJob_FakeBatchAPI(t *testing.T) {
	e, _ := newFake(t)
	_, err := e.Status(t.Context(), Job{JobID: "gone"})
	if err == nil || !strings.Contains(err.Error(), "gone was not found") {
		t.Fatalf("err %v", err)
	}
}

// TestCancelTerminatesWithTheReason_FakeBatchAPI: Ctrl-C terminates the job
// with the reason; an empty reason is refused before any call.
func TestCancelTerminatesWithTheReason_FakeBatchAPI(t *testing.T) {
	e, f := newFake(t)
	if err := e.Cancel(t.Context(), Job{JobID: "j"}, ""); err == nil {
		t.Error("an empty reason was accepted")
	}
	if err := e.Cancel(t.Context(), Job{JobID: "j"}, "dynops table diff interrupted (Ctrl-C)"); err != nil {
		t.Fatal(err)
	}
	if len(f.terminated) != 1 || aws.ToString(f.terminated[0].JobId) != "j" || aws.ToString(f.terminated[0].Reason) != "dynops table diff interrupted (Ctrl-C)" {
		t.Errorf("TerminateJob calls %+v", f.terminated)
	}
}

var jobNameRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

func TestJobNameFollowsSubmitJobsRule(t *testing.T) {
	for _, c := range []struct{ run, stage string }{
		{"20261129T0100Z-a1b2", "map"},
		{"run.with.dots and spaces", "reduce"},
		{strings.Repeat("x", 200), "reduce"},
		{"--", ""},
	} {
		got := JobName(c.run, c.stage)
		if !jobNameRule.MatchString(got) {
			t.Errorf("JobName(%q, %q) = %q breaks SubmitJob's jobName rule", c.run, c.stage, got)
		}
		if c.stage != "" && !strings.HasSuffix(got, "-"+c.stage) {
			t.Errorf("JobName(%q, %q) = %q lost the stage", c.run, c.stage, got)
		}
	}
}

// TestSubmitRefusedWhileTheSameStageRuns_FakeBatchAPI: a job of the same run
// and stage that has not ended (left by a driver killed without cancelling
// it) refuses the submission, naming the job and how to stop it; ended jobs
// of that name (a finished or cancelled earlier attempt) do not, on any page.
func TestSubmitRefusedWhileTheSameStageRuns_FakeBatchAPI(t *testing.T) {
	const name = "dynops-20261129T0100Z-a1b2-map"
	for _, status := range []types.JobStatus{"SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING"} {
		t.Run(string(status), func(t *testing.T) {
			e, f := newFake(t)
			f.listed = [][]types.JobSummary{
				{{JobId: aws.String("old-1"), JobName: aws.String(name), Status: "FAILED"}},
				{{JobId: aws.String("old-2"), JobName: aws.String(name), Status: status}},
			}
			_, err := e.Submit(t.Context(), mapStage(4), nil)
			if err == nil || !strings.Contains(err.Error(), "old-2") || !strings.Contains(err.Error(), "aws batch terminate-job --job-id old-2") {
				t.Fatalf("err %v, want a refusal naming old-2 and how to stop it", err)
			}
			if len(f.submitted) != 0 {
				t.Error("submitted while the same stage runs")
			}
			in := f.lists[0]
			if aws.ToString(in.JobQueue) != "dynops-batch" || len(in.Filters) != 1 || aws.ToString(in.Filters[0].Name) != "JOB_NAME" || in.Filters[0].Values[0] != name {
				t.Errorf("ListJobs asked %+v", in)
			}
		})
	}
	e, f := newFake(t)
	f.listed = [][]types.JobSummary{{{JobId: aws.String("old"), JobName: aws.String(name), Status: "SUCCEEDED"}, {JobId: aws.String("other"), JobName: aws.String(name + "-x"), Status: "RUNNING"}}}
	if _, err := e.Submit(t.Context(), mapStage(4), nil); err != nil {
		t.Fatalf("an ended job of the same name, or a running one of another name, refused the stage: %v", err)
	}
}
