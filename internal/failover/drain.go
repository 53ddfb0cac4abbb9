package failover

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The drain is the wait between the fence and the pointer flip that AWS's
// guidance for global tables in "write to one Region" mode asks for
// (Evacuating a Region with DynamoDB global tables): stop writes in the old
// Region, wait about ten times the recent maximum ReplicationLatency (a
// larger multiple when the old Region is unhealthy), then mark the new Region
// active. Without it, writes the old Region took just before the fence may
// still be replicating when the application moves, and are overwritten
// there (last writer wins).

// Drain defaults (docs/dr-drain.md says why).
const (
	DefaultDrainMultiplier = 10.0
	DefaultDrainFloor      = time.Minute
	DefaultDrainCap        = 10 * time.Minute
	DefaultDrainUnhealthy  = 30 * time.Minute
	// MaxDrainMultiplier and MaxDrain bound what the flags accept.
	MaxDrainMultiplier = 100.0
	MaxDrain           = 2 * time.Hour
)

// DrainRules shape the drain of a switch.
type DrainRules struct {
	// Multiplier times the largest ReplicationLatency into the target
	// (default DefaultDrainMultiplier).
	Multiplier float64
	// Floor and Cap bound the drain the metric gives.
	Floor, Cap time.Duration
	// Unhealthy is the drain when a source region's metric cannot be read
	// (the region or its CloudWatch does not answer).
	Unhealthy time.Duration
	// Override is --drain: the wait to use instead; nil when not given.
	Override *time.Duration
	// Reason is --reason: why an override shorter than the computed drain
	// is accepted (it needs --force too).
	Reason string
}

// DefaultDrainRules are the rules with every default.
func DefaultDrainRules() DrainRules {
	return DrainRules{Multiplier: DefaultDrainMultiplier, Floor: DefaultDrainFloor, Cap: DefaultDrainCap, Unhealthy: DefaultDrainUnhealthy}
}

// Validate checks the bounds of the rules; the error names the flag.
func (d DrainRules) Validate(force bool) error {
	switch {
	case d.Multiplier < 1 || d.Multiplier > MaxDrainMultiplier:
		return fmt.Errorf("--drain-multiplier %g: must be between 1 and %g (AWS's guidance: about 10)", d.Multiplier, MaxDrainMultiplier)
	case d.Floor < 0 || d.Floor > MaxDrain:
		return fmt.Errorf("--drain-floor %s: must be between 0s and %s", d.Floor, MaxDrain)
	case d.Cap < d.Floor || d.Cap > MaxDrain:
		return fmt.Errorf("--drain-cap %s: must be between --drain-floor (%s) and %s", d.Cap, d.Floor, MaxDrain)
	case d.Unhealthy < d.Cap || d.Unhealthy > MaxDrain:
		return fmt.Errorf("--drain-unhealthy %s: must be between --drain-cap (%s) and %s (AWS's guidance: a larger multiple when the old region is unhealthy)", d.Unhealthy, d.Cap, MaxDrain)
	}
	if d.Override != nil {
		switch {
		case *d.Override < 0 || *d.Override > MaxDrain:
			return fmt.Errorf("--drain %s: must be between 0s and %s", *d.Override, MaxDrain)
		case *d.Override == 0 && (!force || strings.TrimSpace(d.Reason) == ""):
			return fmt.Errorf("--drain 0s skips the wait AWS's guidance asks for between the fence and the flip (writes still replicating are overwritten): it needs --force and --reason 'why'")
		}
	}
	return nil
}

// DrainSource is ReplicationLatency from one region that took writes into the target.
type DrainSource struct {
	From       string        `json:"from"`
	To         string        `json:"to"`
	Max        time.Duration `json:"max_ns"`
	Datapoints int           `json:"datapoints"`
	// Counted is false when the source does not replicate into the target
	// (stand-in tables, --allow-unreplicated).
	Counted bool `json:"counted"`
	// Missing says why the metric could not be used ("" when it could).
	Missing string `json:"missing,omitempty"`
	// Unhealthy: the source or its CloudWatch does not answer.
	Unhealthy bool `json:"unhealthy,omitempty"`
}

// Drain rules applied, as DrainPlan.Rule says.
const (
	DrainByMetric    = "metric"          // multiplier x max latency, within floor and cap
	DrainNoData      = "no-datapoints"   // a source answers but published no latency: the cap
	DrainUnhealthy   = "unhealthy"       // a source or its metric does not answer: Unhealthy
	DrainNothing     = "nothing-to-wait" // nothing replicates into the target
	DrainMRSC        = "mrsc"            // multi-Region strong consistency: RPO 0, no drain
	DrainOverride    = "override"        // --drain, not shorter than the computed drain
	DrainOverridden  = "override-forced" // --drain shorter than computed, with --force and --reason
	DrainNotComputed = "not-computed"
)

// DrainPlan is the wait between the fence and the flip, and what it came from.
type DrainPlan struct {
	Wait time.Duration `json:"wait_ns"`
	// Computed is the drain the rules give before any override.
	Computed time.Duration `json:"computed_ns"`
	Rule     string        `json:"rule"`
	// Basis is the rule that gave Computed (Rule, unless --drain overrode it).
	Basis      string        `json:"basis"`
	Multiplier float64       `json:"multiplier"`
	Floor      time.Duration `json:"floor_ns"`
	Cap        time.Duration `json:"cap_ns"`
	Unhealthy  time.Duration `json:"unhealthy_ns"`
	// MaxLatency is the largest ReplicationLatency of the counted sources.
	MaxLatency time.Duration `json:"max_latency_ns"`
	Window     time.Duration `json:"window_ns"`
	Sources    []DrainSource `json:"sources"`
	Reason     string        `json:"reason,omitempty"`
	Detail     string        `json:"detail"`
}

// PlanDrain computes the drain of a switch to r.To from what s says about
// every other region (each one could have taken writes: with three or more
// replicas every source counts), and the preflight check that shows it.
func PlanDrain(s State, r Rules) (DrainPlan, Check) {
	d := r.Drain
	p := DrainPlan{Rule: DrainByMetric, Multiplier: d.Multiplier, Floor: d.Floor, Cap: d.Cap, Unhealthy: d.Unhealthy, Window: r.Window, Reason: d.Reason}
	counted, noData, unhealthy := 0, false, false
	for _, region := range s.Target.Regions {
		if region == r.To {
			continue
		}
		rs, _ := s.Region(region)
		src := DrainSource{From: region, To: r.To}
		l, _ := rs.LatencyInto(r.To)
		switch {
		case !s.Replicated(region, r.To) && (rs.Answers || r.AllowUnreplicated):
			// A region that does not answer counts unless the target lists
			// no replica in it and stand-ins are accepted.
			src.Missing = fmt.Sprintf("the table in %s is not a replica of the one in %s: nothing replicates, not counted", region, r.To)
		case !rs.Answers:
			src.Counted, src.Unhealthy, src.Missing = true, true, fmt.Sprintf("%s does not answer: its ReplicationLatency into %s cannot be read", region, r.To)
		case l.Error != "":
			src.Counted, src.Unhealthy, src.Missing = true, true, l.Error
		case l.Datapoints == 0:
			src.Counted, src.Missing = true, fmt.Sprintf("no ReplicationLatency from %s into %s in the last %s", region, r.To, r.Window)
		default:
			src.Counted, src.Max, src.Datapoints = true, l.Max, l.Datapoints
		}
		if src.Counted {
			counted++
			p.MaxLatency = max(p.MaxLatency, src.Max)
			noData = noData || (src.Missing != "" && !src.Unhealthy)
			unhealthy = unhealthy || src.Unhealthy
		}
		p.Sources = append(p.Sources, src)
	}
	switch {
	case s.MRSC():
		p.Rule, p.Computed = DrainMRSC, 0
	case counted == 0:
		p.Rule, p.Computed = DrainNothing, 0
	case unhealthy:
		p.Rule, p.Computed = DrainUnhealthy, d.Unhealthy
	case noData:
		p.Rule, p.Computed = DrainNoData, d.Cap
	default:
		p.Computed = min(max(time.Duration(float64(p.MaxLatency)*d.Multiplier), d.Floor), d.Cap)
	}
	p.Wait, p.Basis = p.Computed, p.Rule
	c := Check{Name: "drain", Status: CheckOK}
	if d.Override != nil {
		switch {
		case *d.Override >= p.Computed:
			p.Rule, p.Wait = DrainOverride, *d.Override
		case r.Force && strings.TrimSpace(d.Reason) != "":
			p.Rule, p.Wait = DrainOverridden, *d.Override
			c.Status = CheckWarn
		default:
			p.Detail = fmt.Sprintf("--drain %s is shorter than the drain the rules give (%s: %s): writes %s took just before the fence may still be replicating when %s takes writes, and are overwritten there; pass --force and --reason 'why' to accept that, or drop --drain", *d.Override, p.Computed, p.explain(), r.From, r.To)
			c.Status, c.Detail = CheckFail, p.Detail
			return p, c
		}
	}
	p.Detail = p.describe()
	c.Detail = p.Detail
	return p, c
}

// explain says how the computed drain was reached, with the values used.
func (p DrainPlan) explain() string {
	var src []string
	for _, s := range p.Sources {
		switch {
		case !s.Counted:
			src = append(src, s.From+": "+s.Missing)
		case s.Missing != "":
			src = append(src, s.From+": "+s.Missing)
		default:
			src = append(src, fmt.Sprintf("%s -> %s max %s (%d datapoints)", s.From, s.To, s.Max, s.Datapoints))
		}
	}
	var rule string
	switch p.Basis {
	case DrainNothing:
		rule = "nothing replicates into the target: no drain"
	case DrainMRSC:
		rule = "multi-Region strong consistency (MRSC): every write that succeeded is in every replica (RPO 0): no drain"
	case DrainUnhealthy:
		rule = fmt.Sprintf("unhealthy-region rule: a source's latency cannot be read, so the drain is --drain-unhealthy %s (AWS: a larger multiple when the old region is unhealthy); writes it took and did not replicate arrive when it recovers (last writer wins)", p.Unhealthy)
	case DrainNoData:
		rule = fmt.Sprintf("a source published no ReplicationLatency in the last %s, so the drain is --drain-cap %s", p.Window, p.Cap)
	default:
		rule = fmt.Sprintf("%g x max ReplicationLatency %s = %s, within floor %s and cap %s", p.Multiplier, p.MaxLatency, time.Duration(float64(p.MaxLatency)*p.Multiplier), p.Floor, p.Cap)
	}
	return rule + "; " + strings.Join(src, "; ")
}

func (p DrainPlan) describe() string {
	switch p.Rule {
	case DrainOverride:
		return fmt.Sprintf("wait %s (--drain; the rules give %s: %s)", p.Wait, p.Computed, p.explain())
	case DrainOverridden:
		return fmt.Sprintf("wait %s (--drain with --force, reason %q) instead of %s: %s", p.Wait, p.Reason, p.Computed, p.explain())
	}
	return fmt.Sprintf("wait %s after the fence: %s", p.Wait, p.explain())
}

// sleep waits d or until ctx ends (the Runner's Sleep when unset).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// drainTick is how often the countdown reports progress.
const drainTick = time.Second

// drain waits wait less what already passed since the fence (a re-run of a
// switch killed during its drain), reporting progress every drainTick. The
// wait is counted in the Runner's sleeps, so a test clock drives it.
func (r *Runner) drain(ctx context.Context, st *Step, p DrainPlan, since time.Duration) error {
	remaining := max(p.Wait-since, 0)
	sl := r.Sleep
	if sl == nil {
		sl = sleep
	}
	waited := time.Duration(0)
	if r.OnWait != nil {
		r.OnWait(since, p.Wait) // the countdown starts
	}
	for waited < remaining {
		step := min(drainTick, remaining-waited)
		if err := sl(ctx, step); err != nil {
			return fmt.Errorf("drain stopped after %s of %s: %w (the old region stays fenced; run the same command again to finish the drain)", waited+since, p.Wait, err)
		}
		waited += step
		if r.OnWait != nil {
			r.OnWait(waited+since, p.Wait)
		}
	}
	st.Detail = fmt.Sprintf("waited %s of %s (%s)", waited, p.Wait, strings.TrimPrefix(p.Detail, "wait "+p.Wait.String()+" after the fence: "))
	if since > 0 {
		st.Detail = fmt.Sprintf("waited %s more: %s had passed since the fence (canary written at the fence by the run that stopped); drain %s (%s)", waited, since.Round(time.Second), p.Wait, p.explain())
	}
	return nil
}

// drainCanaryKey is the key part of the drain canary: the same for every
// run, so that a re-run of a switch killed during its drain finds the one
// written just before its fence (and when).
const drainCanaryKey = "drain"

// drainRun is what the drain steps of one switch share.
type drainRun struct {
	plan   DrainPlan
	canary *canary       // written in the old region before the fence; nil: none to check
	since  time.Duration // already passed since the fence (a re-run)
}

// drainCanary writes the drain canary in the old region just before the
// fence. When the old region is fenced already (a switch killed during its
// drain), the canary that run wrote is used, and the drain counts from it.
func (r *Runner) drainCanary(ctx context.Context, st *Step, req Request, fromState RegionState, d *drainRun) error {
	from, to, table := req.Rules.From, req.Rules.To, req.Target.Table
	switch {
	case req.Rules.Resume:
		st.Status, st.Detail = StepSkipped, fmt.Sprintf("the pointer already names %s: an earlier run got past its drain", to)
		return nil
	case !fromState.Answers:
		st.Status, st.Detail = StepSkipped, fmt.Sprintf("%s does not answer (--force): no drain canary, the drain cannot be verified", from)
		return nil
	}
	c, err := newCanary(fromState.HashKey, fromState.RangeKey, drainCanaryKey)
	if err != nil {
		return err
	}
	db := r.Clients(from).DynamoDB
	if fromState.Fenced {
		nonce, at, ok, err := c.found(ctx, db, table)
		if err != nil {
			return err
		}
		if !ok || at.IsZero() {
			st.Status, st.Detail = StepSkipped, fmt.Sprintf("%s is fenced already (a run that stopped) and holds no drain canary: the drain is waited in full, not verified by a canary", from)
			return nil
		}
		c.nonce = nonce
		d.canary, d.since = &c, max(r.Now().Sub(at), 0)
		st.Detail = fmt.Sprintf("%s is fenced already (a run that stopped during its drain): its drain canary %s, written %s (%s ago), is used and the drain counts from it", from, c.describe(), at.UTC().Format(time.RFC3339), d.since.Round(time.Second))
		return nil
	}
	c.nonce = fmt.Sprintf("%s-%d", req.Rules.Mode, r.Now().UnixNano())
	if err := c.put(ctx, db, table, r.Now()); err != nil {
		return err
	}
	ok, err := c.read(ctx, db, table, true)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("drain canary %s written in %s but not read back", c.describe(), from)
	}
	d.canary = &c
	st.Detail = fmt.Sprintf("drain canary %s (nonce %s) written in %s and read back", c.describe(), c.nonce, from)
	return nil
}

// drainCheck reads the drain canary in the new region, strongly
// consistent, before the pointer flips: what the old region took before
// its fence has replicated. Then it deletes the canary there (the delete
// replicates back).
func (r *Runner) drainCheck(ctx context.Context, st *Step, req Request, s State, d *drainRun) error {
	from, to, table := req.Rules.From, req.Rules.To, req.Target.Table
	switch {
	case req.Rules.Resume:
		st.Status, st.Detail = StepSkipped, fmt.Sprintf("the pointer already names %s: an earlier run got past its drain", to)
		return nil
	case d.canary == nil:
		st.Status, st.Detail = StepSkipped, "no drain canary (see drain-canary): the drain is not verified"
		return nil
	case !s.Replicated(from, to):
		st.Status = StepSkipped
		st.Detail = fmt.Sprintf("unverifiable: the tables in %s and %s are not replicas of one global table, nothing replicates", from, to)
		if err := d.canary.delete(ctx, r.Clients(from).DynamoDB, table); err != nil {
			st.Detail += fmt.Sprintf("; the canary stays in %s (%v): aws dynamodb delete-item --region %s --table-name %s --key '%s'", from, err, from, table, d.canary.describe())
		} else {
			st.Detail += fmt.Sprintf("; canary deleted in %s", from)
		}
		return nil
	}
	toDB := r.Clients(to).DynamoDB
	ok, err := d.canary.read(ctx, toDB, table, true)
	if err != nil {
		return err
	}
	if !ok {
		undo := Failback
		if req.Rules.Mode == Failback {
			undo = Failover
		}
		return fmt.Errorf("the drain canary %s (nonce %s) written in %s before the fence is not in %s after the drain of %s (strongly consistent read): replication from %s has not caught up, so the pointer was NOT flipped and %s stays fenced; run the same command again to drain again, or undo with `dynops dr %s %s --to %s --yes`",
			d.canary.describe(), d.canary.nonce, from, to, d.plan.Wait, from, from, undo, commonFlags(req), from)
	}
	if err := d.canary.delete(ctx, toDB, table); err != nil {
		return err
	}
	st.Detail = fmt.Sprintf("drain canary %s read in %s (strongly consistent) after the drain: %s's writes before the fence have replicated; deleted (the delete replicates to %s)", d.canary.describe(), to, from, from)
	return nil
}
