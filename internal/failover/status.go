package failover

import (
	"context"
	"strings"
	"time"
)

// Defaults of `dynops dr status` (its --max-replication-latency and
// --latency-window), shared with the readiness run.
const (
	DefaultMaxLatency    = 30 * time.Second
	DefaultLatencyWindow = 15 * time.Minute
)

// DefaultRules are the preflight rules of `dynops dr status` without flags.
func DefaultRules() Rules {
	return Rules{MaxLatency: DefaultMaxLatency, Window: DefaultLatencyWindow}
}

// Status is what `dynops dr status` reports: the table in every region, a
// verdict per region it could fail over to, and whether any is ready.
type Status struct {
	State    State     `json:"state"`
	Verdicts []Verdict `json:"verdicts"`
	Ready    bool      `json:"ready"`
	HalfDone string    `json:"half_done,omitempty"` // a switch stopped between its steps
	// MRSC says what a failover means for a multi-Region strong consistency table.
	MRSC string `json:"mrsc,omitempty"`
}

// ReadStatus inspects t in every region (Inspect) and decides, per region,
// whether writes could fail over there now (Verdicts). Ready is true when at
// least one region is ready, as read back from the service.
func ReadStatus(ctx context.Context, clients Regional, t Target, r Rules, now time.Time) Status {
	state := Inspect(ctx, clients, t, r.Window, now)
	s := Status{State: state, Verdicts: Verdicts(state, r), HalfDone: state.HalfDone(), MRSC: state.MRSCNote()}
	for _, v := range s.Verdicts {
		s.Ready = s.Ready || v.Ready
	}
	return s
}

// Reason says in one line why no region is ready ("" when one is): every
// refusing check of every verdict, and a half-done switch first.
func (s Status) Reason() string {
	if s.Ready {
		return ""
	}
	var why []string
	if s.HalfDone != "" {
		why = append(why, s.HalfDone)
	}
	for _, v := range s.Verdicts {
		why = append(why, "to "+v.To+": "+strings.Join(v.Why, "; "))
	}
	if len(why) == 0 {
		why = append(why, "no region other than the active one to fail over to")
	}
	return strings.Join(why, " | ")
}
