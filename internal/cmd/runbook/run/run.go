// Package run is `dynops runbook run`.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/runbook/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// Options are the flags of `dynops runbook run`.
type Options struct {
	Name    string
	Params  []string
	Yes     bool
	Confirm []string
	Until   string
	Through string
	// RestartFrom runs this step and the later ones again.
	RestartFrom string
	// Decide are the choices of decision steps, STEP=CHOICE.
	Decide []string
	// StateBucket is the team's shared state (BUCKET[/PREFIX]).
	StateBucket string
	// Approvals other callers must approve a destructive step on protected targets.
	Approvals       int
	ApprovalTimeout time.Duration
	// Env picks the config file's runbook section (default: the env of
	// the runbook's targets named by --param).
	Env string
	// NotifySNSTopic and NotifyWebhook (ssm:/PATH or secretsmanager:NAME)
	// receive the run's events; IncidentRecordARN adds them to an Incident
	// Manager incident's timeline.
	NotifySNSTopic    string
	NotifyWebhook     string
	IncidentRecordARN string
	// DestructiveRunsPerHour caps the env's destructive steps on
	// protected targets per hour, across the team (0: none).
	DestructiveRunsPerHour int
	// BreakGlass is the reason of a break-glass run: as the break-glass
	// role, approvals and the cap are skipped (recorded with it).
	BreakGlass string
	// Given reports whether a flag was on the command line (flags win
	// over the config file).
	Given func(flag string) bool
	// InAWS runs it as an ECS task, followed from here (--in-aws).
	InAWS InAWSOptions
}

// NewCmdRun returns `dynops runbook run NAME`.
func NewCmdRun(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a runbook step by step (resumes an interrupted run of the same --incident)",
		Long: `Run asks for the runbook's parameters (or takes --param name=value), then runs
each step through dynops with -o json and shows its output. Before a step that
changes things it shows that step's dry run and asks (on a terminal), or stops
(without one), unless --yes is given; --confirm NAME is passed to those steps
for prod targets. Outputs (the restored table's name, the keys file, the export
ARN) are carried to later steps. Every step is an audit record of the incident
(--incident, DYNOPS_INCIDENT, or a new id printed at the start), and the state
is saved after every step: running the same command again resumes after the
last finished step. On resume, --param may give a new value to a parameter
no step that changes things has used yet (e.g. a --time the restore refused);
the change is recorded, and the finished steps that read it run again.
--restart-from STEP runs STEP and every later step again. --until STEP stops
before STEP runs (look first), --through STEP after it; both exit 5, and the
same command without them goes on.

A decision step (e.g. pitr-restore's path: repair or cutover) is asked on a
terminal even with --yes; --decide STEP=CHOICE gives it, and without a
terminal and without --decide its default is taken (said, and audited).`,
		Example: `  dynops runbook run pitr-restore --incident INC-1234 --param table=prod-hoge-user
  dynops runbook run pitr-restore --incident INC-1234 --yes --confirm prod-hoge-user
  dynops audit timeline --incident INC-1234`,
		// One NAME, checked in RunE: root's flag checks (ranges) come first.
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return factory.UsageErrorf("runbook run: name the runbook (`dynops runbook list` lists them), e.g. dynops runbook run pitr-restore")
			}
			opts.Name = args[0]
			opts.Given = cmd.Flags().Changed
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Params, "param", nil, "a runbook parameter, name=value (repeatable)")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "run the steps that change things (without it: stop before the first, after its dry run)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "stop before this step (e.g. --until restore: look before anything changes), then run again to go on")
	cmd.Flags().StringVar(&opts.Through, "through", "", "stop after this step (e.g. --through restore: look at the restored table), then run again to go on")
	cmd.Flags().StringSliceVar(&opts.Decide, "decide", nil, "the choice of a decision step, STEP=CHOICE (repeatable or comma-separated), e.g. --decide path=repair")
	cmd.Flags().StringVar(&opts.RestartFrom, "restart-from", "", "run this step and every later one again, even if they finished (same --incident)")
	shared.AddStateBucketFlag(cmd.Flags(), &opts.StateBucket)
	cmd.Flags().IntVar(&opts.Approvals, "approvals", 0, "other callers (STS ARNs) who must approve the plan of each destructive step on protected targets before it runs (needs --state-bucket)")
	flagcheck.Range(cmd.Flags(), "approvals", "0", strconv.Itoa(runbook.MaxApprovals), "second approvers per step")
	cmd.Flags().DurationVar(&opts.ApprovalTimeout, "approval-timeout", runbook.DefaultApprovalTimeout, "how long an approval request waits; after it the run stops at the step")
	flagcheck.Range(cmd.Flags(), "approval-timeout", "1s", "168h", "an approval request waits at most a week")
	cmd.Flags().StringVar(&opts.Env, "env", "", "the env whose runbook settings of the config file apply (default: the env of the targets given with --param)")
	cmd.Flags().StringVar(&opts.NotifySNSTopic, "notify-sns-topic", "", "publish the run's events (steps, approvals, decisions, break-glass) to this SNS topic ARN")
	cmd.Flags().StringVar(&opts.NotifyWebhook, "notify-webhook", "", "post the run's events to the Slack-compatible webhook whose URL is kept at ssm:/PATH (SecureString) or secretsmanager:NAME")
	cmd.Flags().StringVar(&opts.IncidentRecordARN, "incident-record-arn", "", "add the run's events to this Incident Manager incident record's timeline")
	cmd.Flags().IntVar(&opts.DestructiveRunsPerHour, "destructive-runs-per-hour", 0, "at most this many destructive steps on protected targets per hour in the env, across the team (needs the shared state; 0: no cap)")
	flagcheck.Range(cmd.Flags(), "destructive-runs-per-hour", "0", strconv.Itoa(runbook.MaxDestructiveRunsPerHour), "destructive runs per hour")
	cmd.Flags().StringVar(&opts.BreakGlass, "break-glass", "", "the reason to skip the approvals and the cap (only as the "+protect.BreakGlassRole+" role; recorded, notified)")
	addInAWSFlags(cmd.Flags(), &opts.InAWS)
	factory.AddConfirmFlag(cmd.Flags(), &opts.Confirm, "the name of a protected target of the runbook's steps (each step that changes things gets the ones that name its targets)")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the step that was running stopped (the audit log of the incident lists the steps done); run the same `dynops runbook run` with the same --incident again: it resumes at that step (with --in-aws only the following stopped: the task goes on)")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd)
	return cmd
}

// Run runs the runbook.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	rb, err := runbook.Find(runbooks.FS, opts.Name)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	params, decide, err := parseChoices(opts)
	if err != nil {
		return err
	}
	incident, err := incidentOf(f, rb)
	if err != nil {
		return err
	}
	tags := audit.Tags{Incident: incident, Runbook: rb.Name}
	f.Audit.SetTags(tags)
	set, err := settings(f, opts, rb, params)
	if err != nil {
		return err
	}
	opts.StateBucket = set.StateBucket.Value // the task gets the resolved bucket
	if opts.InAWS.Enabled && opts.StateBucket == "" {
		return runInAWS(ctx, f, opts, set, nil, rb) // refused: names the fix
	}
	v := newView(f)
	r, err := newRunner(ctx, f, opts, set, rb, tags, v)
	if err != nil {
		return err
	}
	r.Params, r.Decide = params, decide
	if opts.InAWS.Enabled {
		return runInAWS(ctx, f, opts, set, r, rb)
	}
	r.Outcome = outcome(ctx)
	if f.IOStreams.CanPrompt() {
		r.Ask = runbook.LineAsker(f.IOStreams.In, f.IOStreams.ErrOut)
	}
	sum, err := r.Run(ctx, rb)
	if sum != nil {
		f.Audit.Counts(map[string]int64{"steps": int64(len(rb.Steps)), "steps_ran": int64(len(sum.Ran)), "steps_done_earlier": int64(len(sum.Skipped))})
	}
	if err != nil {
		return stopped(ctx, f, rb, incident, err)
	}
	if err := v.Summary(sum); err != nil {
		return err
	}
	if !sum.Complete { // --until or --through: not finished, not failed
		return factory.ExitError{Code: exitcode.Stopped}
	}
	v.Complete(rb.Name, incident, sum)
	return nil
}

// parseChoices reads --param name=value and --decide STEP=CHOICE.
func parseChoices(opts *Options) (params, decide map[string]string, err error) {
	params = map[string]string{}
	for _, p := range opts.Params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, nil, factory.UsageErrorf("--param %q: write name=value", p)
		}
		params[k] = v
	}
	decide = map[string]string{}
	for _, d := range opts.Decide {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" || v == "" {
			return nil, nil, factory.UsageErrorf("--decide %q: write STEP=CHOICE, e.g. --decide path=repair", d)
		}
		decide[k] = v
	}
	return params, decide, nil
}

// incidentOf is the run's incident: --incident, or a new id from the
// runbook's name and the time, said on stderr so the run can be resumed.
func incidentOf(f *factory.Factory, rb *runbook.Runbook) (string, error) {
	incident := f.Flags.Incident
	if incident == "" {
		incident = rb.Name + "-" + f.Now().UTC().Format("20060102t150405z")
		fmt.Fprintf(f.IOStreams.ErrOut, "Incident id: %s (resume or read its timeline with --incident %s)\n", incident, incident)
	}
	if err := runbook.CheckIncident(incident); err != nil {
		return "", factory.UsageErrorf("--incident: %w", err)
	}
	return incident, nil
}

// newRunner is the runner of the run: its state store (the team's S3
// state, or the local one), the caller, the notifier, the audit record of
// its decisions and each step run in-process with the global flags.
func newRunner(ctx context.Context, f *factory.Factory, opts *Options, set runbook.RunSettings, rb *runbook.Runbook, tags audit.Tags, v runView) (*runbook.Runner, error) {
	store, err := shared.Store(ctx, f, set.StateBucket.Value)
	if err != nil {
		return nil, err
	}
	caller := ""
	s3store, _ := store.(*runbook.S3Store)
	if s3store != nil {
		caller = s3store.Caller
		s3store.TTL = opts.InAWS.Lease
	}
	if opts.BreakGlass != "" {
		if caller, err = breakGlass(ctx, f, opts.BreakGlass); err != nil {
			return nil, err
		}
	}
	globals := globalArgs(f, tags.Incident)
	r := &runbook.Runner{
		Store: store, Incident: tags.Incident, Yes: opts.Yes, Confirm: opts.Confirm, Until: opts.Until, Through: opts.Through,
		RestartFrom: opts.RestartFrom,
		Approvals:   set.Approvals.Value, StepApprovals: set.StepApprovals.Value, ApprovalTimeout: opts.ApprovalTimeout, Caller: caller,
		Env: set.Env.Value, Cap: set.Cap.Value, CapFrom: set.Cap.From, BreakGlass: opts.BreakGlass, Notifier: shared.Notifier(ctx, f, set, opts.IncidentRecordARN),
		Out: v.StepOut(), ErrOut: f.IOStreams.ErrOut, Now: f.Now, Summarize: v.Summarize(),
		Begin: func() error {
			return f.Audit.Start(ctx, audit.Plan{Targets: []string{rb.Name}, Counts: map[string]int64{"steps": int64(len(rb.Steps))}})
		},
		Exec: func(ctx context.Context, args []string, step string, stdout io.Writer) int {
			t := tags
			t.Step, t.ParentRun = step, f.Audit.RunID()
			return f.Exec(ctx, withGlobals(args, globals), factory.ExecStreams{In: f.IOStreams.In, Out: stdout,
				ErrOut: f.IOStreams.ErrOut, CanPrompt: f.IOStreams.CanPrompt(), Tags: t})
		},
	}
	auditDecisions(f, r, opts.BreakGlass, caller)
	if s3store != nil {
		r.Counter = s3store
	}
	return r, nil
}

// auditDecisions records in the audit what the runner decides: a gate
// skipped by break-glass, approvals, decision steps' choices, changed
// parameters and steps run again.
func auditDecisions(f *factory.Factory, r *runbook.Runner, breakGlass, caller string) {
	r.BrokeGlass = func(step, gate string) {
		f.Audit.Act(audit.ActRunbookBreakGlass, step, map[string]string{"skipped": gate, "reason": breakGlass, "caller": caller})
	}
	r.Approval = func(event string, a *runbook.Approval) {
		what := map[string]string{"approval-requested": audit.ActRunbookApprovalRequested, "approval-used": audit.ActRunbookApprovalUsed,
			"rejected": audit.ActRunbookApprovalRejected, "timed-out": audit.ActRunbookApprovalTimedOut}[event]
		f.Audit.Act(what, a.Step, map[string]any{"plan_sha256": a.PlanSHA256, "requester": a.Requester, "needed": a.Needed,
			"approvers": a.Approvers, "rejected": a.Rejected, "expires": a.Expires})
	}
	r.Decided = func(step, choice, how string) {
		f.Audit.Act(audit.ActRunbookDecide, step, map[string]string{"choice": choice, "how": how})
	}
	r.Changed = func(c runbook.ParamChange) {
		f.Audit.Act(audit.ActRunbookChangeParam, c.Name, map[string]string{"old": c.Old, "new": c.New})
	}
	r.Restarted = func(step string, again []string) {
		f.Audit.Act(audit.ActRunbookRestartFrom, step, map[string][]string{"run_again": again})
	}
}

// stopped is the exit of a run that did not finish: bad input, a held run
// or the cap (exit 2), a stop before a step (exit 5), Ctrl-C, or a failed
// step (its exit code, with how to resume).
func stopped(ctx context.Context, f *factory.Factory, rb *runbook.Runbook, incident string, err error) error {
	var pe *runbook.ParamError
	var se *runbook.StepError
	var he *runbook.HeldError
	var ce *runbook.CapError
	switch {
	case errors.As(err, &pe), errors.As(err, &he), errors.As(err, &ce):
		return factory.UsageErrorf("%w", err)
	case errors.Is(err, runbook.ErrStopped), errors.Is(err, runbook.ErrAwaitingApproval):
		return factory.ExitError{Code: exitcode.Stopped}
	case errors.As(err, &se) && ctx.Err() != nil:
		// Ctrl-C: the step printed what it left; root says what the run left.
		return fmt.Errorf("running step %s of runbook %s (incident %s): %w", se.Step, rb.Name, incident, ctx.Err())
	case errors.As(err, &se):
		fmt.Fprintf(f.IOStreams.ErrOut, "\nRunbook %s stopped at step %s: %v\nResume: dynops runbook run %s --incident %s ...\n", rb.Name, se.Step, se.Err, rb.Name, incident)
		code := se.Code
		if code == 0 {
			code = 1
		}
		return factory.ExitError{Code: code}
	}
	return err
}

// runView shows a runbook run: where each step's own output goes, whether
// each step's result gets a short line, and the end of a run.
type runView interface {
	StepOut() io.Writer
	Summarize() bool
	// Summary shows the run's summary document (JSON only).
	Summary(sum *runbook.Summary) error
	// Complete says a finished run is complete (a person only).
	Complete(name, incident string, sum *runbook.Summary)
}

// newView is the run's view: human, or JSON under --output json.
func newView(f *factory.Factory) runView {
	return view.Pick[runView](f, humanView{f}, jsonView{f})
}

// humanView shows the steps' output on stdout, a line per step's result
// and the completion on stderr.
type humanView struct{ f *factory.Factory }

func (v humanView) StepOut() io.Writer           { return v.f.IOStreams.Out }
func (humanView) Summarize() bool                { return true }
func (humanView) Summary(*runbook.Summary) error { return nil }
func (v humanView) Complete(name, incident string, sum *runbook.Summary) {
	fmt.Fprintf(v.f.IOStreams.ErrOut, "\nRunbook %s complete for incident %s: %d step(s) run, %d done earlier.\nTimeline: dynops audit timeline --incident %s\n",
		name, incident, len(sum.Ran), len(sum.Skipped), incident)
}

// jsonView keeps stdout for the summary document: the steps' output goes
// to stderr.
type jsonView struct{ f *factory.Factory }

func (v jsonView) StepOut() io.Writer                      { return v.f.IOStreams.ErrOut }
func (jsonView) Summarize() bool                           { return false }
func (v jsonView) Summary(sum *runbook.Summary) error      { return v.f.PrintResult(sum) }
func (jsonView) Complete(string, string, *runbook.Summary) {}

// globalArgs are the global flags each step inherits.
func globalArgs(f *factory.Factory, incident string) [][]string {
	fl := f.Flags
	out := [][]string{{"--audit-log", f.Audit.Path()}, {"--incident", incident}}
	for _, kv := range [][2]string{{"--region", fl.Region}, {"--profile", fl.Profile}, {"--endpoint-url", fl.EndpointURL}, {"--audit-log-group", fl.AuditLogGroup}} {
		if kv[1] != "" {
			out = append(out, []string{kv[0], kv[1]})
		}
	}
	if fl.AuditClearKeys {
		out = append(out, []string{"--audit-clear-keys"})
	}
	if fl.AllowInsecureEndpoint {
		out = append(out, []string{"--allow-insecure-endpoint"})
	}
	return out
}

// withGlobals appends the global flags the step does not set itself.
func withGlobals(args []string, globals [][]string) []string {
	out := append([]string(nil), args...)
	for _, g := range globals {
		set := false
		for _, a := range args {
			if a == g[0] || strings.HasPrefix(a, g[0]+"=") {
				set = true
			}
		}
		if !set {
			out = append(out, g...)
		}
	}
	return out
}
