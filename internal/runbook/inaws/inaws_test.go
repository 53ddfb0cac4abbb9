package inaws

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// fakeECS answers RunTask with out (a fake: the emulator neither refuses
// large overrides nor answers with failures).
type fakeECS struct {
	out   *ecs.RunTaskOutput
	calls int
}

func (f *fakeECS) RunTask(context.Context, *ecs.RunTaskInput, ...func(*ecs.Options)) (*ecs.RunTaskOutput, error) {
	f.calls++
	return f.out, nil
}

func (f *fakeECS) DescribeTasks(context.Context, *ecs.DescribeTasksInput, ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error) {
	return &ecs.DescribeTasksOutput{}, nil
}

var target = Target{Cluster: "oncall", TaskDefinition: "dynops-runner", Container: "dynops", Subnets: []string{"subnet-1"}}

// TestStartRefusesOverridesOverRunTasksLimit_Fake: a command and
// environment longer than RunTask's 8192 characters are refused before
// RunTask is called (moto takes any size).
func TestStartRefusesOverridesOverRunTasksLimit_Fake(t *testing.T) {
	f := &fakeECS{out: &ecs.RunTaskOutput{Tasks: []ecstypes.Task{{TaskArn: aws.String("arn:task")}}}}
	_, err := Start(context.Background(), f, target, []string{"runbook", "run", "x", "--param", "keys=" + strings.Repeat("k", MaxOverrides)}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "over RunTask's 8192") || f.calls != 0 {
		t.Fatalf("err = %v, RunTask calls %d", err, f.calls)
	}
	arn, err := Start(context.Background(), f, target, []string{"runbook", "run", "x"}, map[string]string{"DYNOPS_INCIDENT": "INC-1"}, nil)
	if err != nil || arn != "arn:task" || f.calls != 1 {
		t.Fatalf("arn %q err %v calls %d", arn, err, f.calls)
	}
}

// TestStartReportsRunTaskFailures_Fake: RunTask answering with failures
// (no capacity, a bad subnet: moto answers none) is an error naming them.
func TestStartReportsRunTaskFailures_Fake(t *testing.T) {
	f := &fakeECS{out: &ecs.RunTaskOutput{Failures: []ecstypes.Failure{{Reason: aws.String("RESOURCE:ENI"), Detail: aws.String("no free address in subnet-1")}}}}
	_, err := Start(context.Background(), f, target, []string{"runbook", "run", "x"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "ECS did not start the run") || !strings.Contains(err.Error(), "RESOURCE:ENI no free address") {
		t.Fatalf("err = %v", err)
	}
}
