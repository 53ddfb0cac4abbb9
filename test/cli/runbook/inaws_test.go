package runbook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/test/helpers/harness"
)

// The runner on the emulator. moto 5.2.1's ECS records a RunTask (its
// overrides, tags, startedBy read back by DescribeTasks) but runs no
// container, so each test plays the task: a local dynops process with the
// command and environment RunTask was given, read back from DescribeTasks.
// Measured on moto 5.2.1: RunTask of an awsvpc task definition (every
// Fargate one) fails with a 500 (its ENI has no private_dns_name), and one
// without container-level memory too, and one with a container's memory or
// cpu returns them as JSON numbers (the API's are strings: the SDK refuses
// the response), so the emulator's task definition is bridge-mode with a
// container memoryReservation only; a task's lastStatus advances one
// status per DescribeTasks (STOPPED after four) unless the state manager
// is told otherwise; StopTask sets STOPPED at once with its reason; the
// container's exitCode always reads 0.

// ecsShaped is an endpoint in front of the emulator that gives ECS
// responses the API's shape: moto 5.2.1 writes a task's container cpu (0
// when the task definition has none) and memory as JSON numbers, the API
// as strings, and the SDK refuses the whole RunTask or DescribeTasks
// response. Every other request passes unchanged.
func ecsShaped(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasPrefix(resp.Request.Header.Get("X-Amz-Target"), "AmazonEC2ContainerService") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&doc) == nil {
			tasks, _ := doc["tasks"].([]any)
			if task, ok := doc["task"]; ok {
				tasks = append(tasks, task)
			}
			for _, task := range tasks {
				m, _ := task.(map[string]any)
				containers, _ := m["containers"].([]any)
				for _, c := range containers {
					cm, _ := c.(map[string]any)
					for _, k := range []string{"cpu", "memory", "memoryReservation"} {
						if n, ok := cm[k].(json.Number); ok {
							cm[k] = n.String()
						}
					}
				}
			}
			if fixed, err := json.Marshal(doc); err == nil {
				body = fixed
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ecsRunner is the emulator's stand-in of modules/dynops-runner: a cluster
// and a task definition whose container is named dynops.
type ecsRunner struct {
	ECS                     *ecs.Client
	Cluster, TaskDefinition string
	// Endpoint is the emulator behind ecsShaped: the terminal's.
	Endpoint string
}

func newECSRunner(t *testing.T) ecsRunner {
	t.Helper()
	if target.Emulator == nil {
		t.Skip("the task is simulated by a local process on the emulator; on AWS the runner module's task runs it")
	}
	ctx := context.Background()
	require.NoError(t, target.Emulator.SetTransition(ctx, "ecs::task", `{"progression": "manual", "times": 1000000}`))
	endpoint := ecsShaped(t, target.Emulator.URL)
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{Region: target.Region, EndpointURL: endpoint, MaxAttempts: 2})
	require.NoError(t, err)
	client := awsclients.New(cfg).ECS()
	id := harness.UniqueID()
	c, err := client.CreateCluster(ctx, &ecs.CreateClusterInput{ClusterName: aws.String("oncall-" + id)})
	require.NoError(t, err)
	td, err := client.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{
		Family:      aws.String("dynops-runner-" + id),
		NetworkMode: ecstypes.NetworkModeBridge, // awsvpc: moto 5.2.1 answers RunTask with a 500
		ContainerDefinitions: []ecstypes.ContainerDefinition{{Name: aws.String("dynops"), Image: aws.String("dynops:test"),
			Essential: aws.Bool(true), MemoryReservation: aws.Int32(512), EntryPoint: []string{"dynops"}}},
	})
	require.NoError(t, err)
	return ecsRunner{ECS: client, Cluster: aws.ToString(c.Cluster.ClusterArn), TaskDefinition: aws.ToString(td.TaskDefinition.TaskDefinitionArn), Endpoint: endpoint}
}

func (r ecsRunner) flags() []string {
	return []string{"--in-aws", "--task-cluster", r.Cluster, "--task-definition", r.TaskDefinition, "--task-subnets", "subnet-0emulator", "--task-security-groups", "sg-0emulator"}
}

// start starts p in the background (harness.Proc.Start).
func start(t *testing.T, p *harness.Proc) *harness.Proc {
	t.Helper()
	p.Start()
	return p
}

// eventually polls cond every 50 ms for up to a minute.
func eventually(t *testing.T, what string, p *harness.Proc, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case <-p.Done():
			t.Fatalf("dynops ended before %s:\n%s", what, p.Stderr())
		case <-time.After(50 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no %s after a minute:\n%s", what, p.Stderr())
	}
}

// playTask starts the task `runbook run --in-aws` started, as a local
// process: the command and environment of RunTask's overrides as
// DescribeTasks reads them back (the endpoint: the emulator, or a proxy).
func (r ecsRunner) playTask(t *testing.T, laptop *harness.Proc, store *runbook.S3Store, incident, endpoint, log string) (*harness.Proc, *ecstypes.Task) {
	t.Helper()
	var task *runbook.Task
	eventually(t, "the task's record in the shared state", laptop, func() bool {
		var err error
		task, err = store.LoadTask(context.Background(), incident, "throttling")
		require.NoError(t, err)
		return task != nil
	})
	out, err := r.ECS.DescribeTasks(context.Background(), &ecs.DescribeTasksInput{Cluster: &r.Cluster, Tasks: []string{task.ARN}, Include: []ecstypes.TaskField{ecstypes.TaskFieldTags}})
	require.NoError(t, err)
	require.Len(t, out.Tasks, 1)
	ecsTask := out.Tasks[0]
	require.Len(t, ecsTask.Overrides.ContainerOverrides, 1)
	o := ecsTask.Overrides.ContainerOverrides[0]
	assert.Equal(t, "dynops", aws.ToString(o.Name))
	assert.Equal(t, task.Command, o.Command, "the recorded command is the one RunTask was given")
	var env []string
	for _, kv := range o.Environment {
		env = append(env, aws.ToString(kv.Name)+"="+aws.ToString(kv.Value))
	}
	return start(t, commandWith(t, log, o.Command, harness.Via(endpoint), harness.Env(env...))), &ecsTask
}

// queryHeld is an endpoint in front of the emulator that holds every
// DynamoDB Query (the hot-partition step's) until the client goes away:
// a process using it is mid-step until it is killed.
func queryHeld(t *testing.T) (endpoint string, held <-chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 16)
	u, err := url.Parse(target.Emulator.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Query") {
			_, _ = io.Copy(io.Discard, r.Body) // read: the server then sees the client go
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Minute):
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, arrived
}

// whenHeld waits until p's step is held in queryHeld.
func whenHeld(t *testing.T, p *harness.Proc, held <-chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-p.Done():
		t.Fatalf("dynops ended before its Query:\n%s", p.Stderr())
	case <-time.After(time.Minute):
		t.Fatalf("no Query after a minute:\n%s", p.Stderr())
	}
}

func stepLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "== step ") {
			out = append(out, l)
		}
	}
	return out
}

// finished counts the `finished` records of each runbook step in the logs.
func finished(t *testing.T, logs ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, log := range logs {
		if _, err := os.Stat(log); err != nil {
			continue
		}
		for _, r := range runs(t, log) {
			if r.Step != "" && !r.Interrupted() {
				out[r.Step]++
			}
		}
	}
	return out
}

// timeline is `dynops audit timeline` of the incident over the records of
// every process (the task's come from its --audit-log-group on AWS).
func timeline(t *testing.T, incident string, logs ...string) (md string, steps []string) {
	t.Helper()
	all := filepath.Join(t.TempDir(), "all.jsonl")
	var b []byte
	for _, l := range logs {
		data, err := os.ReadFile(l)
		require.NoError(t, err)
		b = append(b, data...)
	}
	require.NoError(t, os.WriteFile(all, b, 0o600))
	md, errOut, code := target.Dynops(t, all, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code, errOut)
	return md, stepsSection(md)
}

// inAWS is one test's runner, table, state bucket, incident, and the audit
// logs of the laptop and the task.
type inAWS struct {
	ecsRunner
	table, bucket, incident string
	store                   *runbook.S3Store
	logs                    []string // laptop, task
}

func newInAWS(t *testing.T) *inAWS {
	t.Helper()
	c := &inAWS{ecsRunner: newECSRunner(t), incident: "INC-" + harness.UniqueID()}
	_, c.table = prodTable(t)
	var client *s3.Client
	c.bucket, client = stateBucket(t)
	c.store = sharedStore(client, c.bucket, "arn:aws:iam::123456789012:user/test")
	dir := t.TempDir()
	c.logs = []string{filepath.Join(dir, "laptop.jsonl"), filepath.Join(dir, "task.jsonl")}
	return c
}

func (c *inAWS) args(extra ...string) []string {
	return throttlingArgs(c.table, c.bucket, c.incident, extra...)
}

// leaseExpired waits until the run's hold (a killed process's) expires.
func (c *inAWS) leaseExpired(t *testing.T) {
	t.Helper()
	l, err := c.store.Holder(context.Background(), c.incident, "throttling")
	require.NoError(t, err)
	require.NotNil(t, l)
	time.Sleep(time.Until(l.Expires) + 100*time.Millisecond)
}

// eachStepFinishedOnce asserts that, over the laptop's and the task's
// logs, every command step finished exactly once.
func (c *inAWS) eachStepFinishedOnce(t *testing.T) {
	t.Helper()
	assert.Equal(t, map[string]int{"probe": 1, "check": 1, "hot-partition": 1}, finished(t, c.logs...), "nothing done twice")
}

func throttlingArgs(table, bucket, incident string, extra ...string) []string {
	return append([]string{"runbook", "run", "throttling", "--incident", incident, "--yes", "--state-bucket", bucket,
		"--param", "table=" + table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key"}, extra...)
}

// TestRunbookInAWSFollowedFromTheTerminal: `runbook run --in-aws` starts
// the run with RunTask (the runbook, incident, params and state bucket in
// the container's command), records the task next to the run's state, and
// follows the task (played by a local process) from the terminal with the
// step lines the task prints, to the end the task records.
func TestRunbookInAWSFollowedFromTheTerminal(t *testing.T) {
	c := newInAWS(t)
	laptop := start(t, commandAt(t, c.logs[0], c.Endpoint, c.args(c.flags()...)...))
	task, ecsTask := c.playTask(t, laptop, c.store, c.incident, target.Emulator.URL, c.logs[1])

	require.Equal(t, 0, task.WaitWithin(2*time.Minute))
	require.Equal(t, 0, laptop.WaitWithin(time.Minute))
	cmdline := strings.Join(ecsTask.Overrides.ContainerOverrides[0].Command, " ")
	for _, want := range []string{"runbook run throttling", "--incident " + c.incident, "--state-bucket " + c.bucket, "--param table=" + c.table, "--yes"} {
		assert.Contains(t, cmdline, want)
	}
	assert.Equal(t, "dynops", aws.ToString(ecsTask.StartedBy))
	assert.Contains(t, ecsTask.Tags, ecstypes.Tag{Key: aws.String("dynops:incident"), Value: &c.incident})
	sameStepLines(t, task.Stderr(), laptop.Stderr())
	assert.Len(t, stepLines(laptop.Stderr()), 4)
	assert.Contains(t, laptop.Stderr(), "Ctrl-C stops following, not the task")
	assert.Contains(t, laptop.Stderr(), "Runbook throttling complete for incident "+c.incident)
	st, err := c.store.Load(context.Background(), c.incident, "throttling")
	require.NoError(t, err)
	require.NotNil(t, st.Ended)
	assert.Equal(t, 0, st.Ended.Code)

	out, errOut, code := target.Dynops(t, c.logs[0], "runbook", "status", "--incident", c.incident, "--state-bucket", c.bucket, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var status struct {
		Runs []struct {
			Ended struct{ Code int } `json:"ended"`
			Task  struct {
				ARN string `json:"task_arn"`
			} `json:"task"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &status), out)
	require.Len(t, status.Runs, 1)
	assert.Equal(t, aws.ToString(ecsTask.TaskArn), status.Runs[0].Task.ARN, "status names the run's task")
	assert.Equal(t, 0, status.Runs[0].Ended.Code)

	started := runbookRun(t, c.logs[0], c.incident)
	assert.Equal(t, audit.ResultOK, started.Result, "the terminal's run is audited")
	require.NotNil(t, started.Plan)
	assert.Equal(t, int64(1), started.Plan.Counts["tasks"])
}

// sameStepLines asserts that the terminal printed the task's step lines (a
// decision's, without how the task decided: the state keeps the choice).
func sameStepLines(t *testing.T, task, terminal string) {
	t.Helper()
	want, got := stepLines(task), stepLines(terminal)
	require.Len(t, got, len(want), "the terminal prints the task's step lines:\n%s", terminal)
	for i := range want {
		assert.True(t, strings.HasPrefix(want[i], got[i]), "terminal %q, task %q", got[i], want[i])
	}
}

// TestRunbookInAWSTaskKilledResumedFromTheTerminal: the task is SIGKILLed
// in the middle of its last step (ECS then says STOPPED); the terminal
// following it says so and how to resume; once the task's hold expires
// (--lease 2s) the same run resumes on the laptop: the steps the task
// finished are not run again, and the timeline over both has every step
// once (the killed step is a read: it left no `started` record).
func TestRunbookInAWSTaskKilledResumedFromTheTerminal(t *testing.T) {
	c := newInAWS(t)
	laptop := start(t, commandAt(t, c.logs[0], c.Endpoint, c.args(append(c.flags(), "--lease", "2s")...)...))
	endpoint, held := queryHeld(t)
	task, ecsTask := c.playTask(t, laptop, c.store, c.incident, endpoint, c.logs[1])

	whenHeld(t, task, held) // in the hot-partition step
	require.NoError(t, task.Signal(syscall.SIGKILL))
	<-task.Done()
	_, err := c.ECS.StopTask(context.Background(), &ecs.StopTaskInput{Cluster: &c.Cluster, Task: ecsTask.TaskArn, Reason: aws.String("Essential container in task exited")})
	require.NoError(t, err)

	require.Equal(t, 1, laptop.WaitWithin(time.Minute))
	errOut := laptop.Stderr()
	assert.Contains(t, errOut, "stopped before the run ended (ECS: STOPPED (Essential container in task exited)")
	assert.Contains(t, errOut, "3 of 4 step(s) done")
	assert.Contains(t, errOut, "resume it here with the same `dynops runbook run throttling --incident "+c.incident)
	sameStepLines(t, task.Stderr(), errOut)
	assert.Len(t, stepLines(errOut), 4, "the killed step is shown running")

	// The laptop resumes once the dead task's hold expires.
	c.leaseExpired(t)
	_, errOut, code := runAs(t, nil, c.logs[0], c.args()...)
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{"probe", "check", "cause"} {
		assert.Contains(t, errOut, s+": done earlier, skipped")
	}
	c.eachStepFinishedOnce(t)
	md, steps := timeline(t, c.incident, c.logs...)
	assert.Equal(t, []string{"- throttling / probe: ok", "- throttling / check: findings", "- throttling / hot-partition: ok"}, steps)
	assert.Contains(t, md, "1 run(s) INTERRUPTED", "the killed task's own `runbook run`")
}

// TestRunbookLaptopKilledResumedInAWS: the reverse. A laptop's run is
// SIGKILLed in its last step; after its hold expires, `--in-aws` resumes
// it in a task: the terminal shows the laptop's steps as done earlier, the
// task runs the killed step only, and the run ends complete.
func TestRunbookLaptopKilledResumedInAWS(t *testing.T) {
	c := newInAWS(t)
	endpoint, held := queryHeld(t)
	killed := start(t, commandAt(t, c.logs[0], endpoint, c.args("--lease", "2s")...))
	whenHeld(t, killed, held) // in the hot-partition step
	require.NoError(t, killed.Signal(syscall.SIGKILL))
	<-killed.Done()

	// While the dead laptop's hold lasts, --in-aws starts nothing.
	_, errOut, code := target.Dynops(t, c.logs[0], c.args(c.flags()...)...)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "is held by")
	c.leaseExpired(t)

	laptop := start(t, commandAt(t, c.logs[0], c.Endpoint, c.args(c.flags()...)...))
	task, _ := c.playTask(t, laptop, c.store, c.incident, target.Emulator.URL, c.logs[1])
	require.Equal(t, 0, task.WaitWithin(2*time.Minute))
	require.Equal(t, 0, laptop.WaitWithin(time.Minute))
	errOut = laptop.Stderr()
	for _, s := range []string{"probe", "check", "cause"} {
		assert.Contains(t, errOut, s+": done earlier, skipped")
	}
	sameStepLines(t, task.Stderr(), errOut)
	c.eachStepFinishedOnce(t)
	assert.Equal(t, map[string]int{"hot-partition": 1}, stepRuns(t, c.logs[1]), "the task ran the killed step only")
}

// TestRunbookInAWSRefusals: --in-aws without the shared state, without the
// runner's cluster, or with a --param the runbook does not take is refused
// with exit 2 and the fix, and starts no task.
func TestRunbookInAWSRefusals(t *testing.T) {
	c := newInAWS(t)
	cases := []struct {
		args []string
		want string
	}{
		{append(c.args(c.flags()...)[:6], c.args(c.flags()...)[8:]...), "--in-aws needs --state-bucket BUCKET[/PREFIX]"},
		{c.args("--in-aws"), "--in-aws needs --task-cluster, --task-definition and --task-subnets"},
		{c.args(append(c.flags(), "--param", "tabel=x")...), "--param tabel: runbook throttling has no such parameter"},
	}
	for _, tc := range cases {
		_, errOut, code := target.Dynops(t, c.logs[0], tc.args...)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, tc.want)
		assert.Contains(t, errOut, "nothing was")
	}
	tasks, err := c.ECS.ListTasks(context.Background(), &ecs.ListTasksInput{Cluster: &c.Cluster})
	require.NoError(t, err)
	assert.Empty(t, tasks.TaskArns, "no task started")
}

// TestRunbookInAWSCtrlCStopsFollowingNotTheTask: Ctrl-C on the terminal
// that follows a run in AWS ends the follow (exit 130, saying so and how to
// read or stop the task); the task is not stopped.
func TestRunbookInAWSCtrlCStopsFollowingNotTheTask(t *testing.T) {
	c := newInAWS(t)
	laptop := start(t, commandAt(t, c.logs[0], c.Endpoint, c.args(c.flags()...)...))
	var task *runbook.Task
	eventually(t, "the task's record", laptop, func() bool {
		var err error
		task, err = c.store.LoadTask(context.Background(), c.incident, "throttling")
		require.NoError(t, err)
		return task != nil
	})
	time.Sleep(500 * time.Millisecond) // following
	require.NoError(t, laptop.Signal(syscall.SIGINT))
	require.Equal(t, 130, laptop.WaitWithin(time.Minute))
	errOut := laptop.Stderr()
	assert.Contains(t, errOut, "interrupted: dynops runbook run stopped while following task "+task.ARN)
	assert.Contains(t, errOut, "the task goes on in AWS (Ctrl-C stops following, not the task)")
	assert.Contains(t, errOut, "aws ecs stop-task --cluster "+c.Cluster+" --task "+task.ARN)
	out, err := c.ECS.DescribeTasks(context.Background(), &ecs.DescribeTasksInput{Cluster: &c.Cluster, Tasks: []string{task.ARN}})
	require.NoError(t, err)
	require.Len(t, out.Tasks, 1)
	assert.Equal(t, "RUNNING", aws.ToString(out.Tasks[0].LastStatus), "the task was not stopped")
}
