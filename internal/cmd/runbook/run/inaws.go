package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/internal/runbook/inaws"
)

// InAWSOptions are the flags of a run in AWS (--in-aws) and of its hold.
type InAWSOptions struct {
	Enabled bool
	Target  inaws.Target
	// Lease is how long a hold of the shared state lasts without renewal
	// (renewed before every step).
	Lease time.Duration
}

func addInAWSFlags(fl *pflag.FlagSet, o *InAWSOptions) {
	fl.BoolVar(&o.Enabled, "in-aws", false, "run it as an ECS task on Fargate (modules/dynops-runner) and follow it here; needs --state-bucket. Ctrl-C stops following, not the task")
	fl.StringVar(&o.Target.Cluster, "task-cluster", "", "with --in-aws: the ECS cluster (the runner module's cluster_arn)")
	fl.StringVar(&o.Target.TaskDefinition, "task-definition", "", "with --in-aws: the task definition (the runner module's task_definition_arn)")
	fl.StringVar(&o.Target.Container, "task-container", "dynops", "with --in-aws: the task's dynops container")
	fl.StringSliceVar(&o.Target.Subnets, "task-subnets", nil, "with --in-aws: the task's subnets (the runner module's subnet_ids)")
	fl.StringSliceVar(&o.Target.SecurityGroups, "task-security-groups", nil, "with --in-aws: the task's security groups (the runner module's security_group_ids)")
	fl.BoolVar(&o.Target.PublicIP, "task-public-ip", false, "with --in-aws: give the task a public IP (subnets without a NAT gateway or VPC endpoints)")
	fl.DurationVar(&o.Lease, "lease", runbook.DefaultLeaseTTL, "with --state-bucket: how long a hold of the run lasts without renewal (renewed before every step; make it longer than the longest step): after it, a run whose laptop or task died can be resumed")
	flagcheck.Range(fl, "lease", "1s", "24h", "a hold of a run")
}

// runInAWS starts the run as an ECS task and follows it: the task runs
// `dynops runbook run` on the shared state, this terminal reads it.
func runInAWS(ctx context.Context, f *factory.Factory, opts *Options, set runbook.RunSettings, r *runbook.Runner, rb *runbook.Runbook) error {
	store, before, err := checkInAWS(ctx, f, opts, r, rb)
	if err != nil {
		return err
	}
	task, api, err := startTask(ctx, f, opts, set, r, rb, store)
	if err != nil {
		return err
	}
	arn, o, w := task.ARN, opts.InAWS, f.IOStreams.ErrOut
	fmt.Fprintf(w, "Started %s for incident %s in ECS task %s (cluster %s).\nFollowing it here from its state in %s: Ctrl-C stops following, not the task.\n",
		rb.Name, r.Incident, arn, o.Target.Cluster, opts.StateBucket)
	fol := &runbook.Follower{Runbook: rb, ErrOut: w}
	fl := &inaws.Follow{Store: store, ECS: api, Task: task, Incident: r.Incident, Follower: fol}
	if before != nil {
		fol.Earlier, fl.Before = before.Done, before.Ended
	}
	end, err := fl.Run(ctx)
	resume := fmt.Sprintf("resume it here with the same `dynops runbook run %s --incident %s --state-bucket %s ...` without --in-aws, or in a new task with --in-aws", rb.Name, r.Incident, opts.StateBucket)
	switch {
	case errors.Is(err, inaws.ErrTaskGone):
		until := "now"
		if l, lerr := store.Holder(context.WithoutCancel(ctx), r.Incident, rb.Name); lerr == nil && l.Active(f.Now()) {
			until = "after its hold expires at " + l.Expires.Format(time.RFC3339)
		}
		return fmt.Errorf("task %s stopped before the run ended (ECS: %s): %s; %s", arn, end.Task, doneSoFar(end.State, rb), "it left the run where the state says; "+until+", "+resume)
	case ctx.Err() != nil:
		return fmt.Errorf("following task %s of incident %s: %w; the task goes on in AWS (Ctrl-C stops following, not the task): read it with `dynops runbook status --incident %s --state-bucket %s`, stop it with `aws ecs stop-task --cluster %s --task %s`",
			arn, r.Incident, ctx.Err(), r.Incident, opts.StateBucket, o.Target.Cluster, arn)
	case err != nil:
		return fmt.Errorf("following task %s (it goes on in AWS): %w", arn, err)
	}
	fol.ShowEnd(end.State)
	if end.Ended.Code != 0 {
		return factory.ExitError{Code: end.Ended.Code}
	}
	fmt.Fprintf(w, "\nRunbook %s complete for incident %s in task %s.\nTimeline: dynops audit timeline --incident %s (the task's audit records are in its --audit-log-group)\n", rb.Name, r.Incident, arn, r.Incident)
	return nil
}

// checkInAWS refuses a run in AWS that cannot start: no shared state, the
// runner module's outputs missing, a runbook its parameters do not fill,
// or a run held by another; it returns the shared state and the run's
// state before the task.
func checkInAWS(ctx context.Context, f *factory.Factory, opts *Options, r *runbook.Runner, rb *runbook.Runbook) (*runbook.S3Store, *runbook.State, error) {
	o := opts.InAWS
	if opts.StateBucket == "" {
		return nil, nil, factory.UsageErrorf("--in-aws needs --state-bucket BUCKET[/PREFIX]: the task keeps the run's state there and this terminal follows it there (a local state file is on this machine only); nothing was started. Give the runner module's state bucket, e.g. --state-bucket acme-oncall")
	}
	if o.Target.Cluster == "" || o.Target.TaskDefinition == "" || len(o.Target.Subnets) == 0 {
		return nil, nil, factory.UsageErrorf("--in-aws needs --task-cluster, --task-definition and --task-subnets (and usually --task-security-groups): the outputs of modules/dynops-runner (`terraform output -raw dynops_flags` prints them); nothing was started")
	}
	if err := r.Preflight(rb); err != nil {
		return nil, nil, factory.UsageErrorf("%w; nothing was started", err)
	}
	store, ok := r.Store.(*runbook.S3Store)
	if !ok {
		return nil, nil, fmt.Errorf("--in-aws: the run's state is not the shared S3 state")
	}
	if l, err := store.Holder(ctx, r.Incident, rb.Name); err != nil {
		return nil, nil, err
	} else if l.Active(f.Now()) {
		return nil, nil, factory.UsageErrorf("%w", &runbook.HeldError{Incident: r.Incident, Runbook: rb.Name, Lease: *l, Where: "s3://" + store.Bucket + "/" + store.Prefix + r.Incident + "/"})
	}
	before, err := store.Load(ctx, r.Incident, rb.Name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := store.LoadTask(ctx, r.Incident, rb.Name); err != nil { // its ETag: the new task replaces it
		return nil, nil, err
	}
	return store, before, nil
}

// startTask starts the ECS task (audited first) and records it next to
// the run's state.
func startTask(ctx context.Context, f *factory.Factory, opts *Options, set runbook.RunSettings, r *runbook.Runner, rb *runbook.Runbook, store *runbook.S3Store) (runbook.Task, inaws.ECS, error) {
	o := opts.InAWS
	command := taskCommand(f, opts, set, r, rb.Name)
	if err := f.Audit.Start(ctx, audit.Plan{Targets: []string{rb.Name}, Counts: map[string]int64{"steps": int64(len(rb.Steps)), "tasks": 1}}); err != nil {
		return runbook.Task{}, nil, err
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return runbook.Task{}, nil, err
	}
	api := clients.ECS()
	arn, err := inaws.Start(ctx, api, o.Target, command, map[string]string{"DYNOPS_INCIDENT": r.Incident},
		map[string]string{"dynops:incident": r.Incident, "dynops:runbook": rb.Name})
	if err != nil {
		return runbook.Task{}, nil, err
	}
	task := runbook.Task{ARN: arn, Cluster: o.Target.Cluster, TaskDefinition: o.Target.TaskDefinition, Container: o.Target.Container,
		Command: command, StartedBy: store.Caller, Started: f.Now().UTC()}
	f.Audit.Act(audit.ActRunbookInAWS, arn, task)
	if err := store.SaveTask(ctx, r.Incident, rb.Name, &task); err != nil {
		return runbook.Task{}, nil, fmt.Errorf("task %s started, but recording it next to the run's state failed (the run goes on; follow it with `dynops runbook status --incident %s --state-bucket %s`): %w", arn, r.Incident, opts.StateBucket, err)
	}
	return task, api, nil
}

func doneSoFar(st *runbook.State, rb *runbook.Runbook) string {
	if st == nil {
		return "it ran no step"
	}
	return fmt.Sprintf("%d of %d step(s) done", len(st.Done), len(rb.Steps))
}

// taskCommand is the task container's command: the same run on the shared
// state, which resumes where the state says (dynops is the image's
// entrypoint).
func taskCommand(f *factory.Factory, opts *Options, set runbook.RunSettings, r *runbook.Runner, name string) []string {
	c := []string{"runbook", "run", name, "--incident", r.Incident, "--state-bucket", opts.StateBucket, "--lease", opts.InAWS.Lease.String()}
	for _, p := range opts.Params {
		c = append(c, "--param", p)
	}
	for _, d := range opts.Decide {
		c = append(c, "--decide", d)
	}
	for _, v := range opts.Confirm {
		c = append(c, "--confirm", v)
	}
	for _, kv := range [][2]string{{"--until", opts.Until}, {"--through", opts.Through}, {"--restart-from", opts.RestartFrom}, {"--audit-log-group", f.Flags.AuditLogGroup}} {
		if kv[1] != "" {
			c = append(c, kv[0], kv[1])
		}
	}
	// The task has no config file: it gets the team settings this run
	// resolved (flag, config or default) as flags. Per-step approvals have
	// no flag: the task asks for the most any step needs (stricter, never
	// fewer).
	approvals := set.Approvals.Value
	for _, n := range set.StepApprovals.Value {
		approvals = max(approvals, n)
	}
	if approvals > 0 {
		c = append(c, "--approvals", fmt.Sprint(approvals), "--approval-timeout", opts.ApprovalTimeout.String())
	}
	if set.Cap.Value > 0 {
		c = append(c, "--destructive-runs-per-hour", fmt.Sprint(set.Cap.Value))
	}
	for _, kv := range [][2]string{{"--env", set.Env.Value}, {"--notify-sns-topic", set.SNSTopicARN.Value}, {"--notify-webhook", set.Webhook.Value}, {"--incident-record-arn", opts.IncidentRecordARN}} {
		if kv[1] != "" {
			c = append(c, kv[0], kv[1])
		}
	}
	if opts.Yes {
		c = append(c, "--yes")
	}
	return c
}

// outcome is the exit code and reason of a run's end, recorded in its
// state for a terminal that follows it (the codes Run returns).
func outcome(ctx context.Context) func(*runbook.Summary, error) (int, string) {
	return func(sum *runbook.Summary, err error) (int, string) {
		var pe *runbook.ParamError
		var se *runbook.StepError
		switch {
		case err == nil && sum != nil && sum.Complete:
			return exitcode.OK, "complete"
		case err == nil:
			return exitcode.Stopped, "stopped at --until or --through: run it again without them to go on"
		case ctx.Err() != nil:
			return exitcode.Interrupted, "interrupted (Ctrl-C, or the task was stopped): " + err.Error()
		case errors.Is(err, runbook.ErrAwaitingApproval):
			return exitcode.Stopped, "waiting for a second approver: " + err.Error()
		case errors.Is(err, runbook.ErrStopped):
			return exitcode.Stopped, "stopped before a step that changes things (no --yes, or a decision to take): " + err.Error()
		case errors.As(err, &pe):
			return exitcode.Usage, err.Error()
		case errors.As(err, &se) && se.Code != 0:
			return se.Code, err.Error()
		}
		return exitcode.Failure, err.Error()
	}
}
