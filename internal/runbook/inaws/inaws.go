// Package inaws runs a runbook in the team's AWS account (`dynops runbook
// run --in-aws`): it starts the run as an ECS task on Fargate, whose
// container runs `dynops runbook run` on the shared state, and follows it
// from the terminal by reading that state, printing the step lines the task
// prints. Following changes nothing: stopping it leaves the task running.
package inaws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/runbook"
)

// ECS is the part of the ECS client a run in AWS uses.
type ECS interface {
	RunTask(ctx context.Context, in *ecs.RunTaskInput, optFns ...func(*ecs.Options)) (*ecs.RunTaskOutput, error)
	DescribeTasks(ctx context.Context, in *ecs.DescribeTasksInput, optFns ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error)
}

// Target is where the task runs: the runner module's outputs.
type Target struct {
	Cluster        string
	TaskDefinition string
	Container      string // the container whose command is the run's
	Subnets        []string
	SecurityGroups []string
	PublicIP       bool // assign a public IP (a subnet without a NAT gateway or VPC endpoints)
}

// MaxOverrides is RunTask's limit on the JSON of its overrides (8192
// characters, ECS API reference, TaskOverride).
const MaxOverrides = 8192

// Start runs the task with command as its container's command and env in
// its environment, and returns the task's ARN.
func Start(ctx context.Context, api ECS, t Target, command []string, env map[string]string, tags map[string]string) (string, error) {
	var kv []ecstypes.KeyValuePair
	size := 0
	for _, a := range command {
		size += len(a) + 3
	}
	for k, v := range env {
		kv = append(kv, ecstypes.KeyValuePair{Name: aws.String(k), Value: aws.String(v)})
		size += len(k) + len(v) + 24
	}
	if size > MaxOverrides {
		return "", fmt.Errorf("the task's command and environment take about %d characters, over RunTask's %d: pass fewer or shorter --param values (a long key list as a file the task reads)", size, MaxOverrides)
	}
	var ts []ecstypes.Tag
	for k, v := range tags {
		ts = append(ts, ecstypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	ip := ecstypes.AssignPublicIpDisabled
	if t.PublicIP {
		ip = ecstypes.AssignPublicIpEnabled
	}
	out, err := api.RunTask(ctx, &ecs.RunTaskInput{
		Cluster:        &t.Cluster,
		TaskDefinition: &t.TaskDefinition,
		LaunchType:     ecstypes.LaunchTypeFargate,
		Count:          aws.Int32(1),
		StartedBy:      aws.String("dynops"),
		NetworkConfiguration: &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{
			Subnets: t.Subnets, SecurityGroups: t.SecurityGroups, AssignPublicIp: ip}},
		Overrides: &ecstypes.TaskOverride{ContainerOverrides: []ecstypes.ContainerOverride{{
			Name: &t.Container, Command: command, Environment: kv}}},
		Tags: ts,
	})
	if err != nil {
		return "", fmt.Errorf("starting the run in ECS (cluster %s, task definition %s): %w", t.Cluster, t.TaskDefinition, err)
	}
	if len(out.Failures) > 0 || len(out.Tasks) == 0 {
		var why []string
		for _, f := range out.Failures {
			why = append(why, aws.ToString(f.Reason)+" "+aws.ToString(f.Detail))
		}
		return "", fmt.Errorf("ECS did not start the run (cluster %s, task definition %s): %s; check the runner module's subnets and the cluster's Fargate capacity", t.Cluster, t.TaskDefinition, strings.Join(why, "; "))
	}
	return aws.ToString(out.Tasks[0].TaskArn), nil
}

// TaskStatus is what ECS says of the task.
type TaskStatus struct {
	Last, Desired, StoppedReason string
	ExitCode                     *int32 // the container's, once it stopped
}

// Stopped reports whether the task ended.
func (s TaskStatus) Stopped() bool { return s.Last == string(ecstypes.DesiredStatusStopped) }

func (s TaskStatus) String() string {
	out := s.Last
	if s.StoppedReason != "" {
		out += " (" + s.StoppedReason + ")"
	}
	if s.ExitCode != nil {
		out += fmt.Sprintf(", container exit %d", *s.ExitCode)
	}
	return out
}

// Describe reads the task's status; a task ECS no longer knows (it keeps
// stopped tasks about an hour) reads as stopped.
func Describe(ctx context.Context, api ECS, cluster, arn, container string) (TaskStatus, error) {
	out, err := api.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: &cluster, Tasks: []string{arn}})
	if err != nil {
		return TaskStatus{}, fmt.Errorf("reading task %s: %w", arn, err)
	}
	if len(out.Tasks) == 0 {
		return TaskStatus{Last: string(ecstypes.DesiredStatusStopped), StoppedReason: "ECS no longer knows the task"}, nil
	}
	t := out.Tasks[0]
	s := TaskStatus{Last: aws.ToString(t.LastStatus), Desired: aws.ToString(t.DesiredStatus), StoppedReason: aws.ToString(t.StoppedReason)}
	for _, c := range t.Containers {
		if aws.ToString(c.Name) == container {
			s.ExitCode = c.ExitCode
		}
	}
	return s, nil
}

// Follow follows a run in a task until it ends.
type Follow struct {
	Store    *runbook.S3Store
	ECS      ECS
	Task     runbook.Task
	Incident string
	Follower *runbook.Follower
	// Before is the end the state recorded before the task started (an
	// earlier run's), nil if none: the task's own end is another.
	Before   *runbook.Ended
	Interval time.Duration // between reads (default FollowInterval)
}

// FollowInterval is the wait between two reads of the state and the task.
const FollowInterval = 2 * time.Second

// End is how a followed run ended.
type End struct {
	State *runbook.State
	// Ended is the run's own record of its end; nil when the task stopped
	// without one (killed, out of memory, stopped by hand).
	Ended *runbook.Ended
	Task  TaskStatus
}

// ErrTaskGone is a task that stopped without recording the run's end.
var ErrTaskGone = errors.New("the task stopped before the run ended")

// Run prints the run's step lines as its states change, and returns when
// the run records its end, or the task stops without one (ErrTaskGone,
// with the End). Ctrl-C ends the follow, not the task.
func (fl *Follow) Run(ctx context.Context) (*End, error) {
	rb := fl.Follower.Runbook.Name
	end := &End{}
	interval := fl.Interval
	if interval <= 0 {
		interval = FollowInterval
	}
	read := func(ctx context.Context) (bool, error) {
		st, err := fl.Store.Load(ctx, fl.Incident, rb)
		if err != nil || st == nil {
			return false, err
		}
		end.State = st
		fl.Follower.Show(st)
		if st.Ended != nil && (fl.Before == nil || !st.Ended.At.Equal(fl.Before.At)) {
			end.Ended = st.Ended
			return true, nil
		}
		return false, nil
	}
	err := poll.Until(ctx, poll.Options{Interval: interval, What: "the run in task " + fl.Task.ARN}, func(ctx context.Context) (bool, string, error) {
		if done, err := read(ctx); done || err != nil {
			return done, "", err
		}
		s, err := Describe(ctx, fl.ECS, fl.Task.Cluster, fl.Task.ARN, fl.Task.Container)
		if err != nil {
			return false, "", err
		}
		end.Task = s
		if !s.Stopped() {
			return false, s.Last, nil
		}
		// The run records its end before the task exits: read once more.
		done, err := read(ctx)
		if err == nil && !done {
			err = ErrTaskGone
		}
		return done, s.Last, err
	})
	return end, err
}
