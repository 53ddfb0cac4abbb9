// Package exportwindow decides what a gap-free series of DynamoDB exports
// does next (DDB-EXP-01): it splits a time range into incremental-export
// windows AWS accepts (each 15 minutes to 24 hours), checks a range against
// the table's PITR window, and, from a stored checkpoint and the export in
// flight, says whether to start a full export, start the next incremental
// window, advance the checkpoint, retry, or wait. It makes no AWS calls; the
// CLI and the scheduler Lambda share it through internal/export.
package exportwindow

import (
	"errors"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/pitrtime"
)

// Limits of one incremental export window, as AWS requires.
const (
	MinWindow = 15 * time.Minute
	MaxWindow = 24 * time.Hour
)

// Window is one incremental export period: From inclusive, To exclusive
// (the semantics of ExportFromTime / ExportToTime).
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Duration is the window's length.
func (w Window) Duration() time.Duration { return w.To.Sub(w.From) }

func (w Window) String() string {
	return w.From.UTC().Format(time.RFC3339) + ".." + w.To.UTC().Format(time.RFC3339)
}

// PITR is the range a table can be exported from: its earliest and latest
// restorable times (DescribeContinuousBackups).
type PITR struct {
	Earliest time.Time
	Latest   time.Time
}

// ErrTooShort: the range is shorter than one minimum window.
var ErrTooShort = errors.New("shorter than the 15-minute minimum of an incremental export")

// Split divides [from, to) into contiguous windows of at most 24 hours, none
// shorter than 15 minutes: full 24-hour windows from `from`, and when the
// remainder would be under 15 minutes the last two windows are rebalanced.
// Times are kept as given (not rounded), so a series that starts each window
// where the last ended stays contiguous.
func Split(from, to time.Time) ([]Window, error) {
	from, to = from.UTC(), to.UTC()
	if !to.After(from) {
		return nil, fmt.Errorf("range %s..%s: the end must be after the start", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) < MinWindow {
		return nil, fmt.Errorf("range %s..%s (%s) is %w", from.Format(time.RFC3339), to.Format(time.RFC3339), to.Sub(from), ErrTooShort)
	}
	var ws []Window
	for start := from; start.Before(to); {
		end := start.Add(MaxWindow)
		if end.After(to) {
			end = to
		}
		ws = append(ws, Window{From: start, To: end})
		start = end
	}
	if n := len(ws); n > 1 && ws[n-1].Duration() < MinWindow {
		// Borrow from the previous (full) window so the last one is 15 minutes.
		cut := ws[n-1].To.Add(-MinWindow)
		ws[n-2].To, ws[n-1].From = cut, cut
	}
	return ws, nil
}

// CheckRange refuses an explicit range AWS would refuse: a start before the
// PITR window or an end after the latest restorable time (e.g. in the future).
// Both bounds are accepted as printed (milliseconds, internal/pitrtime).
func CheckRange(from, to time.Time, p PITR) error {
	if _, ok := pitrtime.Resolve(from, p.Earliest, p.Latest); !ok && from.Before(p.Earliest) {
		return fmt.Errorf("start %s is before the table's PITR window (earliest restorable %s): exports can only read inside it",
			pitrtime.Format(from), pitrtime.Format(p.Earliest))
	}
	if _, ok := pitrtime.Resolve(to, p.Earliest, p.Latest); !ok && to.After(p.Latest) {
		return fmt.Errorf("end %s is after the latest restorable time %s (is it in the future?): pass an earlier end",
			pitrtime.Format(to), pitrtime.Format(p.Latest))
	}
	return nil
}

// Export types, as the API names them.
const (
	Full        = "FULL_EXPORT"
	Incremental = "INCREMENTAL_EXPORT"
)

// Export statuses, as the API names them.
const (
	InProgress = "IN_PROGRESS"
	Completed  = "COMPLETED"
	Failed     = "FAILED"
)

// InFlight is an export the series started (or is about to start) and has
// not yet accounted for. It is recorded BEFORE the export is requested, with
// the client token, so a crash between the two re-requests the same export
// (the token makes the request idempotent) instead of starting another.
type InFlight struct {
	Type       string    `json:"type"`                 // Full or Incremental
	ExportTime time.Time `json:"export_time,omitzero"` // Full: the snapshot time
	Window     Window    `json:"window,omitzero"`      // Incremental: the period
	Token      string    `json:"client_token"`         // ClientToken of the request
	ExportArn  string    `json:"export_arn,omitempty"` // "" until the request returned
	Status     string    `json:"status,omitempty"`     // last known status
	Failure    string    `json:"failure,omitempty"`    // FailureMessage of a failed export
	StartedAt  time.Time `json:"started_at,omitzero"`  // when it was requested
}

// End is the time the checkpoint moves to once this export completes.
func (f InFlight) End() time.Time {
	if f.Type == Full {
		return f.ExportTime
	}
	return f.Window.To
}

// State is what the checkpoint store keeps per table.
type State struct {
	Table string `json:"table"`
	// Checkpoint: everything before it is exported (zero: no full export yet).
	Checkpoint time.Time `json:"checkpoint,omitzero"`
	InFlight   *InFlight `json:"in_flight,omitempty"`
	// Failures counts consecutive failed exports of the current window.
	Failures int `json:"failures"`
	// Version increases with every write: the store's compare-and-swap.
	Version int64 `json:"version"`
}

// Action is what to do next.
type Action string

// Actions Decide returns.
const (
	StartFull        Action = "start-full"        // no checkpoint (or it fell out of PITR): baseline
	StartIncremental Action = "start-incremental" // the next window from the checkpoint
	Request          Action = "request"           // in flight but never requested: request it again (same token)
	Poll             Action = "poll"              // in flight: read its status
	Advance          Action = "advance"           // in flight COMPLETED: checkpoint = its end
	Retry            Action = "retry"             // in flight FAILED: drop it, keep the checkpoint
	Wait             Action = "wait"              // in flight IN_PROGRESS
	UpToDate         Action = "up-to-date"        // less than one minimum window since the checkpoint
)

// Decision is Decide's answer.
type Decision struct {
	Action     Action    `json:"action"`
	Window     Window    `json:"window,omitzero"`      // StartIncremental
	ExportTime time.Time `json:"export_time,omitzero"` // StartFull
	// Pending counts the windows still to export after this one (catch-up).
	Pending int `json:"pending"`
	// Gap is set when changes were lost to the series (the checkpoint fell
	// out of the PITR window): the scheduler alarms on it.
	Gap    bool   `json:"gap,omitempty"`
	Reason string `json:"reason"`
}

// Decide says what the series does next. status is the in-flight export's
// status ("" when not yet polled). The checkpoint only ever moves to the end
// of a COMPLETED export, and the next window always starts at the checkpoint,
// so windows are contiguous: no gap, no overlap. A failed export is retried
// from the same checkpoint.
func Decide(s State, p PITR) Decision {
	if f := s.InFlight; f != nil {
		switch {
		case f.ExportArn == "":
			return Decision{Action: Request, Reason: "an export was recorded but its request did not return: request it again with the same client token"}
		case f.Status == "":
			return Decision{Action: Poll, Reason: "export in flight: " + f.ExportArn}
		case f.Status == Completed:
			return Decision{Action: Advance, Reason: fmt.Sprintf("%s completed: checkpoint moves to %s", f.Type, f.End().UTC().Format(time.RFC3339))}
		case f.Status == Failed:
			return Decision{Action: Retry, Reason: fmt.Sprintf("%s failed (%s): the checkpoint stays at %s and the window is retried", f.Type, f.Failure, s.Checkpoint.UTC().Format(time.RFC3339))}
		default:
			return Decision{Action: Wait, Reason: fmt.Sprintf("%s %s since %s", f.Type, f.Status, f.StartedAt.UTC().Format(time.RFC3339))}
		}
	}
	if s.Checkpoint.IsZero() {
		return Decision{Action: StartFull, ExportTime: p.Latest.UTC(), Reason: "no checkpoint yet: a full export is the baseline"}
	}
	if s.Checkpoint.Before(p.Earliest) {
		return Decision{Action: StartFull, ExportTime: p.Latest.UTC(), Gap: true,
			Reason: fmt.Sprintf("GAP: checkpoint %s fell out of the PITR window (earliest %s); changes in between cannot be exported: a new full export re-baselines",
				s.Checkpoint.UTC().Format(time.RFC3339), p.Earliest.UTC().Format(time.RFC3339))}
	}
	ws, err := Split(s.Checkpoint, p.Latest)
	if err != nil {
		return Decision{Action: UpToDate, Reason: fmt.Sprintf("checkpoint %s; latest restorable %s: less than 15 minutes to export",
			s.Checkpoint.UTC().Format(time.RFC3339), p.Latest.UTC().Format(time.RFC3339))}
	}
	return Decision{Action: StartIncremental, Window: ws[0], Pending: len(ws) - 1,
		Reason: fmt.Sprintf("next window %s (%d more to catch up)", ws[0], len(ws)-1)}
}

// Lag is how far the series is behind: now minus the checkpoint; before the
// first full export completes, the time since it was requested.
func Lag(s State, now time.Time) time.Duration {
	switch {
	case !s.Checkpoint.IsZero():
		return now.Sub(s.Checkpoint)
	case s.InFlight != nil && !s.InFlight.StartedAt.IsZero():
		return now.Sub(s.InFlight.StartedAt)
	}
	return 0
}
