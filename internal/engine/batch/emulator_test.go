package batch_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsbatch "github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/engine/batch"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// queue makes a job queue and a job definition on the emulator.
// moto 5.2.1 refuses a managed (Fargate) compute environment whose subnets
// and security groups it does not hold, and asks for a service role AWS
// does not need, so the queue sits on an unmanaged one: the engine only
// names the queue and the definition. moto checks the service role exists.
func queue(t *testing.T, c *awsbatch.Client) (queueName, definition string) {
	t.Helper()
	ctx := testctx.Bounded(t)
	id := harness.UniqueID()
	role, err := iam.NewFromConfig(target.AWSConfig(t)).CreateRole(ctx, &iam.CreateRoleInput{
		RoleName:                 aws.String("dynops-batch-service-" + id),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"batch.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	require.NoError(t, err)
	ce, err := c.CreateComputeEnvironment(ctx, &awsbatch.CreateComputeEnvironmentInput{
		ComputeEnvironmentName: aws.String("dynops-" + id), Type: types.CETypeUnmanaged, State: types.CEStateEnabled,
		ServiceRole: role.Role.Arn,
	})
	require.NoError(t, err)
	_, err = c.CreateJobQueue(ctx, &awsbatch.CreateJobQueueInput{
		JobQueueName: aws.String("dynops-" + id), State: types.JQStateEnabled, Priority: aws.Int32(1),
		ComputeEnvironmentOrder: []types.ComputeEnvironmentOrder{{Order: aws.Int32(1), ComputeEnvironment: ce.ComputeEnvironmentArn}},
	})
	require.NoError(t, err)
	jd, err := c.RegisterJobDefinition(ctx, &awsbatch.RegisterJobDefinitionInput{
		JobDefinitionName: aws.String("dynops-" + id + "-worker"), Type: types.JobDefinitionTypeContainer,
		// vcpus/memory, not resourceRequirements as on Fargate: moto then
		// answers DescribeJobs with "vcpus": 1.0, which the Go SDK cannot
		// read into an integer (measured: deserialization failed).
		ContainerProperties: &types.ContainerProperties{
			Image: aws.String("123456789012.dkr.ecr.eu-west-1.amazonaws.com/dynops:test"),
			Vcpus: aws.Int32(1), Memory: aws.Int32(2048),
		},
		RetryStrategy: &types.RetryStrategy{Attempts: aws.Int32(2)},
	})
	require.NoError(t, err)
	return "dynops-" + id, aws.ToString(jd.JobDefinitionArn)
}

func describe(t *testing.T, c *awsbatch.Client, id string) types.JobDetail {
	t.Helper()
	out, err := c.DescribeJobs(testctx.Bounded(t), &awsbatch.DescribeJobsInput{Jobs: []string{id}})
	require.NoError(t, err)
	require.Len(t, out.Jobs, 1, "DescribeJobs %s", id)
	return out.Jobs[0]
}

// TestBatchEngineOnTheEmulator: map (3 shards) and reduce (after map)
// submitted, described and terminated through the production client; what
// the emulator records is what the engine asked: the array size, each
// child's command, the dependency on the whole map job, the tags, the
// termination reason; the same stage is not submitted again while its job
// has not ended. moto 5.2.1 runs no container without Docker: every
// child fails at once, and the engine reports the stage failed (the
// summary counts every child ended although moto leaves the parent
// SUBMITTED), so a run on a broken queue stops instead of waiting forever.
func TestBatchEngineOnTheEmulator(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the emulator's facts (no container runs); on AWS, TestLargeTableDiffOnBatchFargate (test/modules/batch) runs the engine")
	}
	ctx := testctx.Bounded(t)
	c := awsclients.New(target.AWSConfig(t)).Batch()
	q, jd := queue(t, c)
	e, err := batch.New(c, batch.Options{Queue: q, JobDefinition: jd, Tags: map[string]string{"team": "db"}})
	require.NoError(t, err)

	const run = "s3://hoge-runs/diff/run-emu-1"
	mapJob, err := e.Submit(ctx, engine.Stage{Name: "map", Args: []string{"shard", "run", "--run", run, "--stage", "map"}, Shards: 3}, nil)
	require.NoError(t, err)
	reduceJob, err := e.Submit(ctx, engine.Stage{Name: "reduce", Args: []string{"shard", "run", "--run", run, "--stage", "reduce"}, Shards: 2}, mapJob)
	require.NoError(t, err)

	m := describe(t, c, mapJob.ID())
	assert.Equal(t, "dynops-run-emu-1-map", aws.ToString(m.JobName))
	require.NotNil(t, m.ArrayProperties)
	assert.EqualValues(t, 3, aws.ToInt32(m.ArrayProperties.Size))
	require.NotNil(t, m.Container)
	assert.Equal(t, []string{"dynops", "shard", "run", "--run", run, "--stage", "map", "--shards", "3"}, m.Container.Command)
	assert.Equal(t, "run-emu-1", m.Tags["dynops:run"])
	assert.Equal(t, "db", m.Tags["team"])
	r := describe(t, c, reduceJob.ID())
	require.Len(t, r.DependsOn, 1)
	assert.Equal(t, mapJob.ID(), aws.ToString(r.DependsOn[0].JobId))
	assert.Empty(t, r.DependsOn[0].Type, "reduce waits for the whole map job, not N_TO_N")

	var seen []engine.Status
	err = engine.Wait(ctx, e, mapJob, 100*time.Millisecond, func(s engine.Status) { seen = append(seen, s) })
	require.Error(t, err, "moto runs no container: the map stage must fail, not hang")
	assert.Contains(t, err.Error(), "3 shard(s) failed")
	require.NotEmpty(t, seen)
	assert.Equal(t, engine.Status{Failed: 3, Done: true}, seen[len(seen)-1])

	// moto leaves an array parent SUBMITTED for good: to the engine the
	// run's map stage has not ended, so the same stage is not submitted twice.
	_, err = e.Submit(ctx, engine.Stage{Name: "map", Args: []string{"shard", "run", "--run", run, "--stage", "map"}, Shards: 3}, nil)
	require.Error(t, err, "the same run's map stage submitted while its job has not ended")
	assert.Contains(t, err.Error(), mapJob.ID())

	reason := "dynops table diff interrupted (Ctrl-C)"
	require.NoError(t, e.Cancel(ctx, reduceJob, reason))
	assert.Equal(t, reason, aws.ToString(describe(t, c, reduceJob.ID()).StatusReason))

	one, err := e.Submit(ctx, engine.Stage{Name: "map", Args: []string{"shard", "run", "--run", run + "-one", "--stage", "map"}, Shards: 1}, nil)
	require.NoError(t, err)
	p := describe(t, c, one.ID())
	assert.Nil(t, p.ArrayProperties, "one shard is a plain job")
	assert.True(t, slices.Equal(p.Container.Command[len(p.Container.Command)-2:], []string{"--shard", "0/1"}), "command %q", p.Container.Command)
	err = engine.Wait(ctx, e, one, 100*time.Millisecond, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 shard(s) failed")

	_, err = e.Status(ctx, batch.Job{JobID: "00000000-0000-0000-0000-000000000000"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was not found")

	bad, err := batch.New(c, batch.Options{Queue: "no-such-queue", JobDefinition: jd})
	require.NoError(t, err)
	_, err = bad.Submit(ctx, engine.Stage{Name: "map", Args: []string{"shard", "run", "--run", run, "--stage", "map"}, Shards: 2}, nil)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "no-such-queue"), "the error names the queue: %v", err)
}
