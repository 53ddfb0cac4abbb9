package failover

import (
	"context"
	"time"
)

// DrillResult is a failover and the failback that follows it, with the time
// each took: the measured RTO of the procedure.
type DrillResult struct {
	Table    string  `json:"table"`
	Home     string  `json:"home_region"`
	Away     string  `json:"away_region"`
	DryRun   bool    `json:"dry_run"`
	OK       bool    `json:"ok"`
	Failover Result  `json:"failover"`
	Failback *Result `json:"failback,omitempty"`
	// RTO is how long the failover took, preflight to verified canary.
	RTO   time.Duration `json:"rto_ns"`
	Total time.Duration `json:"total_ns"`
}

// Drill fails req.Target over to req.Rules.To and back. It stops at the first
// failure (the failback does not run after a failed failover; the failover's
// Rollback says how to undo it). A dry run reports the failover's plan only:
// the failback's preflight depends on the state the failover leaves.
func (r *Runner) Drill(ctx context.Context, req Request) (DrillResult, error) {
	start := r.Now()
	req.Rules.Mode = Failover
	fo, err := r.Run(ctx, req)
	d := DrillResult{Table: req.Target.Table, Home: fo.From, Away: fo.To, DryRun: !req.Execute, Failover: fo, RTO: fo.Duration}
	if err != nil || !req.Execute {
		d.OK = err == nil
		d.Total = r.Now().Sub(start)
		return d, err
	}
	back := req
	back.Rules.Mode = Failback
	back.Rules.From, back.Rules.To, back.Rules.FromGiven = fo.To, fo.From, true
	fb, err := r.Run(ctx, back)
	d.Failback = &fb
	d.OK = err == nil
	d.Total = r.Now().Sub(start)
	return d, err
}

// Verdict says whether writes may fail over to a region now, and why not.
type Verdict struct {
	To     string   `json:"to"`
	Ready  bool     `json:"ready"`
	Why    []string `json:"why,omitempty"`
	Checks []Check  `json:"checks"`
}

// Verdicts runs the failover preflight from the active region to every other region.
func Verdicts(s State, r Rules) []Verdict {
	var vs []Verdict
	r.Mode, r.From = Failover, s.Active
	for _, rs := range s.Regions {
		if rs.Region == s.Active {
			continue
		}
		r.To = rs.Region
		v := Verdict{To: rs.Region}
		if s.Active == "" {
			v.Checks = []Check{{Name: "pointer", Status: CheckFail, Detail: "the pointer does not name one region everywhere: " + describePointers(s)}}
		} else {
			v.Checks = Preflight(s, r)
		}
		v.Why = Refused(v.Checks)
		v.Ready = len(v.Why) == 0
		vs = append(vs, v)
	}
	return vs
}

func describePointers(s State) string {
	out := ""
	for _, rs := range s.Regions {
		v := rs.Pointer
		if rs.PointerError != "" {
			v = "unreadable"
		}
		if out != "" {
			out += ", "
		}
		out += rs.Region + "=" + v
	}
	return out
}

// Fenced returns the regions whose table carries the fence.
func (s State) Fenced() []string {
	var out []string
	for _, rs := range s.Regions {
		if rs.Fenced {
			out = append(out, rs.Region)
		}
	}
	return out
}

// FencedBy returns the regions whose table a fence of owner holds.
func (s State) FencedBy(owner Owner) []string {
	var out []string
	for _, rs := range s.Regions {
		if rs.Fenced && ownerOf(rs.FenceSid) == owner {
			out = append(out, rs.Region)
		}
	}
	return out
}
