// Package shared holds what the `dynops dr` commands have in common: the
// flags that name a table's regions and pointer, the clients per region, and
// the printing of a switch.
package shared

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
)

// TargetFlags name the table, its regions, its pointer and its health checks.
type TargetFlags struct {
	Table        string
	Regions      []string
	Pointer      string
	HealthChecks map[string]string
	// MaxLatency and Window judge ReplicationLatency.
	MaxLatency        time.Duration
	Window            time.Duration
	AllowUnreplicated bool
	// BreakGlassRoleARN is the one role a fence may exempt besides replication.
	BreakGlassRoleARN string
}

// AddTargetFlags registers the flags of TargetFlags on cmd.
func AddTargetFlags(cmd *cobra.Command, t *TargetFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&t.Table, "table", "t", "", "the table (its name is the same in every region)")
	fl.StringSliceVar(&t.Regions, "regions", nil, "regions of the table (default: --region and the replicas DescribeTable lists there)")
	flagcheck.Region(fl, "regions")
	fl.StringVar(&t.Pointer, "pointer", "", "SSM parameter naming the active region (default: /dynops/dr/TABLE/active-region, as modules/dr creates it)")
	fl.StringToStringVar(&t.HealthChecks, "health-check", nil, "Route 53 health check of a region's failover record, REGION=ID (repeatable; modules/dr output health_check_ids)")
	fl.DurationVar(&t.MaxLatency, "max-replication-latency", failover.DefaultMaxLatency, "refuse a failover while ReplicationLatency into the target is above this")
	flagcheck.Range(fl, "max-replication-latency", "1ms", "", "a bound of 0 refuses every failover")
	fl.DurationVar(&t.Window, "latency-window", failover.DefaultLatencyWindow, "how far back ReplicationLatency is read")
	flagcheck.Range(fl, "latency-window", "1m", "24h", "CloudWatch needs at least a minute of datapoints")
	fl.BoolVar(&t.AllowUnreplicated, "allow-unreplicated", false, "accept same-name tables that are not replicas of one global table (stand-ins, e.g. on the local emulator); nothing replicates")
	fl.StringVar(&t.BreakGlassRoleARN, "break-glass-role-arn", "", "IAM role, in the table's account, that may still write in a fenced region (default: none); a fence exempting any other principal is reported as no fence")
}

// Validate checks the flags; errors are usage errors naming the flag.
func (t *TargetFlags) Validate() error {
	if t.Table == "" {
		return factory.UsageErrorf("--table is required (e.g. --table prod-hoge-session)")
	}
	if err := failover.ValidateBreakGlassARN(t.BreakGlassRoleARN, ""); err != nil {
		return factory.UsageErrorf("--break-glass-role-arn: %v", err)
	}
	seen := map[string]bool{}
	for _, r := range t.Regions {
		if r == "" || seen[r] {
			return factory.UsageErrorf("--regions %q: list each region once, e.g. --regions eu-west-1,eu-central-1", strings.Join(t.Regions, ","))
		}
		seen[r] = true
	}
	if len(t.Regions) == 1 {
		return factory.UsageErrorf("--regions needs at least two regions (the table's replicas)")
	}
	for r, id := range t.HealthChecks {
		if r == "" || id == "" {
			return factory.UsageErrorf("--health-check takes REGION=ID, e.g. --health-check eu-west-1=abcd-1234")
		}
	}
	return nil
}

// Rules returns the preflight rules of the flags.
func (t *TargetFlags) Rules() failover.Rules {
	return failover.Rules{MaxLatency: t.MaxLatency, Window: t.Window, AllowUnreplicated: t.AllowUnreplicated}
}

// Target is what the flags name; Regions is empty until Resolve discovers them.
func (t *TargetFlags) Target() failover.Target {
	target := failover.Target{Table: t.Table, Regions: t.Regions, Pointer: t.Pointer, HealthChecks: t.HealthChecks, BreakGlassRoleARN: t.BreakGlassRoleARN}
	if target.Pointer == "" {
		target.Pointer = failover.DefaultPointer(t.Table)
	}
	return target
}

// Resolve loads AWS configuration, builds clients per region and returns the target.
func Resolve(ctx context.Context, f *factory.Factory, t *TargetFlags) (failover.Target, *failover.Runner, error) {
	set, err := f.AWS(ctx)
	if err != nil {
		return failover.Target{}, nil, err
	}
	clients := failover.RegionalFrom(set)
	target := t.Target()
	if len(target.Regions) == 0 {
		target.Regions, err = failover.DiscoverRegions(ctx, set.DynamoDB(), t.Table, set.Region())
		if err != nil {
			return target, nil, fmt.Errorf("%w; if %s is down, pass --regions with the table's regions", err, set.Region())
		}
		if len(target.Regions) < 2 {
			return target, nil, fmt.Errorf("%s in %s lists no replicas: it is not a global table (see runbooks/dr-restore-in-region.md), or pass --regions to name same-name tables", t.Table, set.Region())
		}
	}
	for r := range target.HealthChecks {
		if !contains(target.Regions, r) {
			return target, nil, factory.UsageErrorf("--health-check %s=...: %s is not one of the table's regions (%s)", r, r, strings.Join(target.Regions, ", "))
		}
	}
	runner := &failover.Runner{
		Clients: clients,
		Route53: set.Route53(),
		Now:     f.Now,
		Record:  f.Audit.Act,
	}
	return target, runner, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// SwitchFlags are the flags of failover, failback and drill.
type SwitchFlags struct {
	To                 string
	From               string
	Yes                bool
	Force              bool
	Confirm            []string
	ReplicationTimeout time.Duration
	// Drain shapes the wait between the fence and the pointer flip.
	Drain failover.DrainRules
	// drain is --drain as given; drainGiven tells whether it was.
	drain      time.Duration
	drainGiven func() bool
	// PauseTemplate is the env's AWS FIS pause template (failover only:
	// AddPauseTemplateFlag).
	PauseTemplate string
}

// AddPauseTemplateFlag registers --pause-template (dr failover).
func AddPauseTemplateFlag(cmd *cobra.Command, s *SwitchFlags) {
	cmd.Flags().StringVar(&s.PauseTemplate, "pause-template", "", "the env's AWS FIS pause experiment template (modules/dr output fis_pause_replication_template_id): refuse while an experiment of it runs in --to")
}

// AddSwitchFlags registers the flags of SwitchFlags on cmd.
func AddSwitchFlags(cmd *cobra.Command, s *SwitchFlags, toHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&s.To, "to", "", toHelp)
	fl.StringVar(&s.From, "from", "", "the region that takes writes now (default: the one the pointer names everywhere)")
	flagcheck.Region(fl, "to")
	flagcheck.Region(fl, "from")
	fl.BoolVar(&s.Yes, "yes", false, "do it (without --yes: a dry run that runs the preflight and prints every step)")
	fl.BoolVar(&s.Force, "force", false, "the old region is down: skip only the checks and steps it cannot answer, and say so")
	factory.AddConfirmFlag(fl, &s.Confirm, "the table name of a switch of a protected table")
	fl.DurationVar(&s.ReplicationTimeout, "replication-timeout", time.Minute, "how long to wait for the canary to replicate to the old region")
	flagcheck.Range(fl, "replication-timeout", "1s", "", "the canary needs time to replicate")
	d := failover.DefaultDrainRules()
	maxDrain := failover.MaxDrain.String()
	fl.Float64Var(&s.Drain.Multiplier, "drain-multiplier", d.Multiplier, "drain after the fence: this many times the recent maximum ReplicationLatency into the target (AWS's guidance: about 10)")
	flagcheck.Range(fl, "drain-multiplier", "1", fmt.Sprint(failover.MaxDrainMultiplier), "times the recent maximum ReplicationLatency")
	fl.DurationVar(&s.Drain.Floor, "drain-floor", d.Floor, "the shortest drain the metric gives (the minute of latency CloudWatch has not published yet)")
	flagcheck.Range(fl, "drain-floor", "0s", maxDrain, "at most --drain-cap")
	fl.DurationVar(&s.Drain.Cap, "drain-cap", d.Cap, "the longest drain the metric gives; also the drain when the old region published no ReplicationLatency in --latency-window")
	flagcheck.Range(fl, "drain-cap", "0s", maxDrain, "at least --drain-floor")
	fl.DurationVar(&s.Drain.Unhealthy, "drain-unhealthy", d.Unhealthy, "the drain when the old region's ReplicationLatency cannot be read (the region or its CloudWatch does not answer)")
	flagcheck.Range(fl, "drain-unhealthy", "0s", maxDrain, "at least --drain-cap")
	fl.DurationVar(&s.drain, "drain", 0, "wait this long after the fence instead of the computed drain; shorter than computed (0s included) only with --force and --reason")
	flagcheck.Range(fl, "drain", "0s", maxDrain, "0s only with --force and --reason")
	s.drainGiven = func() bool { return fl.Changed("drain") }
	fl.StringVar(&s.Drain.Reason, "reason", "", "why a --drain shorter than the computed drain is accepted (recorded in the audit log)")
}

// Validate checks the switch flags.
func (s *SwitchFlags) Validate(t *TargetFlags) error {
	if s.To != "" && s.To == s.From {
		return factory.UsageErrorf("--to and --from are both %s: name the region writes move to", s.To)
	}
	if s.drainGiven != nil && s.drainGiven() {
		d := s.drain
		s.Drain.Override = &d
	}
	if err := s.Drain.Validate(s.Force); err != nil {
		return factory.UsageErrorf("%v", err)
	}
	for _, r := range []string{s.To, s.From} {
		if r != "" && len(t.Regions) > 0 && !contains(t.Regions, r) {
			return factory.UsageErrorf("%s is not in --regions %s", r, strings.Join(t.Regions, ","))
		}
	}
	return nil
}

// Request builds the switch request; execute is the outcome of the guard's Confirm.
func (s *SwitchFlags) Request(mode failover.Mode, target failover.Target, t *TargetFlags, execute bool) failover.Request {
	rules := t.Rules()
	rules.Mode, rules.From, rules.To, rules.FromGiven, rules.Force = mode, s.From, s.To, s.From != "", s.Force
	rules.Drain = s.Drain
	return failover.Request{Target: target, Rules: rules, BreakGlassRoleARN: t.BreakGlassRoleARN, ReplicationTimeout: s.ReplicationTimeout, Execute: execute, PauseTemplate: s.PauseTemplate}
}

// Protection decides whether the table is protected (guard.Decide of protect.ReadTable in
// the --region the command runs in; tags that cannot be read, e.g. the region
// is down, leave it protected).
func Protection(ctx context.Context, f *factory.Factory, t *TargetFlags) (*guard.Decided, error) {
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return guard.Decide(f, protect.ReadTable(ctx, clients.DynamoDB(), t.Table))
}

// ConfirmSwitch applies the one confirmation rule (guard's Confirm) to a
// switch of t; when it goes ahead, the run's `started` audit record is
// written first, and when that fails nothing goes ahead.
func (s *SwitchFlags) ConfirmSwitch(ctx context.Context, f *factory.Factory, t *TargetFlags) (*guard.Confirmed, error) {
	d, err := Protection(ctx, f, t)
	if err != nil {
		return nil, err
	}
	g, err := d.Confirm(s.Yes, s.Confirm)
	if err != nil || g.DryRun() {
		return g, err
	}
	for _, r := range append([]string{s.To, s.From}, t.Regions...) {
		f.Audit.AddRegion(r)
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{t.Table}}); err != nil {
		return nil, err
	}
	return g, nil
}

// CountSteps writes the steps of a switch to the audit record, by status.
func CountSteps(f *factory.Factory, results ...*failover.Result) {
	counts := map[string]int64{}
	for _, r := range results {
		if r == nil {
			continue
		}
		for _, st := range r.Steps {
			counts["steps_"+strings.ToLower(string(st.Status))]++
		}
	}
	f.Audit.Counts(counts)
}

// Progress is how a switch shows itself while it runs: the header and each
// step as it ends for a person; nothing under --output json (stdout carries
// the result document only).
type Progress interface {
	Header(mode failover.Mode, req failover.Request)
	StreamSteps(r *failover.Runner)
}

// NewProgress picks the run's progress view.
func NewProgress(f *factory.Factory) Progress {
	return view.Pick[Progress](f, humanProgress{ios: f.IOStreams}, quietProgress{})
}

type quietProgress struct{}

func (quietProgress) Header(failover.Mode, failover.Request) {}
func (quietProgress) StreamSteps(*failover.Runner)           {}

type humanProgress struct{ ios *iostreams.IOStreams }

// StreamSteps prints each step as it ends.
func (h humanProgress) StreamSteps(r *failover.Runner) {
	ios := h.ios
	var bar *iostreams.Bar
	r.OnWait = func(waited, total time.Duration) {
		if bar == nil {
			bar = ios.StartProgress("drain (seconds after the fence)", int64(total/time.Second))
		}
		bar.Set(int64(waited / time.Second))
		if waited >= total {
			bar.Done()
			bar = nil
		}
	}
	r.OnStep = func(st failover.Step) {
		if st.Name == "preflight" {
			fmt.Fprintf(ios.Out, "%s:\n", st.Mode)
		}
		fmt.Fprintf(ios.Out, "  %-18s %-8s %8s  %s\n", st.Name, colourStep(ios, st.Status), roundDuration(st.Duration), stepText(st))
	}
}

func stepText(st failover.Step) string {
	switch st.Status {
	case failover.StepPlanned, failover.StepNotRun:
		return st.Plan
	}
	if st.Detail == "" {
		return st.Plan
	}
	return st.Detail
}

func colourStep(ios *iostreams.IOStreams, s failover.StepStatus) string {
	text := strings.ToUpper(string(s))
	switch s {
	case failover.StepDone:
		return ios.Colour(iostreams.Green, text)
	case failover.StepFailed:
		return ios.Colour(iostreams.Red, text)
	case failover.StepSkipped:
		return ios.Colour(iostreams.Yellow, text)
	}
	return text
}

func roundDuration(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

// Header prints what is about to run.
func (h humanProgress) Header(mode failover.Mode, req failover.Request) {
	to := req.Rules.To
	if to == "" {
		to = "(the region the state names)"
	}
	if !req.Execute {
		fmt.Fprintln(h.ios.Out, guard.DryRunHeader(fmt.Sprintf("run dr %s %s -> %s:", mode, req.Target.Table, to)))
		return
	}
	fmt.Fprintf(h.ios.Out, "dynops dr %s %s -> %s: running\n", mode, req.Target.Table, to)
}

// PrintChecks prints preflight checks as a table.
func PrintChecks(ios *iostreams.IOStreams, checks []failover.Check) error {
	rows := make([][]string, 0, len(checks))
	for _, c := range checks {
		st := strings.ToUpper(string(c.Status))
		switch c.Status {
		case failover.CheckFail:
			st = ios.Colour(iostreams.Red, st)
		case failover.CheckWarn, failover.CheckSkipped:
			st = ios.Colour(iostreams.Yellow, st)
		default:
			st = ios.Colour(iostreams.Green, st)
		}
		rows = append(rows, []string{"  " + c.Name, st, c.Detail})
	}
	return ios.Table([]string{"  CHECK", "STATUS", "DETAIL"}, rows)
}

// PrintResult prints the end of a switch: preflight, outcome and rollback.
func PrintResult(ios *iostreams.IOStreams, res failover.Result, g *guard.Confirmed) error {
	fmt.Fprintf(ios.Out, "\npreflight %s -> %s:\n", res.From, res.To)
	if err := PrintChecks(ios, res.Checks); err != nil {
		return err
	}
	switch {
	case res.OK && res.DryRun:
		fmt.Fprintf(ios.Out, "\n%s\n", g.DryRunNotice(fmt.Sprintf("%s %s to %s", res.Mode, res.Table, res.To)))
	case res.OK:
		fmt.Fprintf(ios.Out, "\n%s of %s to %s done in %s\n", res.Mode, res.Table, res.To, roundDuration(res.Duration))
	default:
		fmt.Fprintf(ios.Out, "\n%s STOPPED: %s\nTo roll back, run in this order:\n", res.Mode, res.Error)
		for i, c := range res.Rollback {
			fmt.Fprintf(ios.Out, "  %d. %s\n", i+1, c)
		}
	}
	return nil
}

// RunSwitch confirms, runs and prints a failover or failback.
func RunSwitch(ctx context.Context, f *factory.Factory, mode failover.Mode, t *TargetFlags, s *SwitchFlags) error {
	g, err := s.ConfirmSwitch(ctx, f, t)
	if err != nil {
		return err
	}
	target, runner, err := Resolve(ctx, f, t)
	if err != nil {
		return err
	}
	req := s.Request(mode, target, t, !g.DryRun())
	p := NewProgress(f)
	p.Header(mode, req)
	p.StreamSteps(runner)
	res, runErr := runner.Run(ctx, req)
	CountSteps(f, &res)
	err = view.Results(f, func(r failover.Result) error { return PrintResult(f.IOStreams, r, g) }).Show(res)
	if runErr != nil {
		return runErr
	}
	return err
}
