package exportwindow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// contiguous asserts the windows tile [from, to) exactly and are each valid.
func contiguous(t *testing.T, ws []Window, from, to time.Time) {
	t.Helper()
	require.NotEmpty(t, ws)
	assert.Equal(t, from, ws[0].From, "first window starts at the range start")
	assert.Equal(t, to, ws[len(ws)-1].To, "last window ends at the range end")
	for i, w := range ws {
		assert.GreaterOrEqual(t, w.Duration(), MinWindow, "window %d %s under 15 minutes", i, w)
		assert.LessOrEqual(t, w.Duration(), MaxWindow, "window %d %s over 24 hours", i, w)
		if i > 0 {
			assert.Equal(t, ws[i-1].To, w.From, "gap or overlap between windows %d and %d", i-1, i)
		}
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name  string
		from  time.Time
		to    time.Time
		count int
	}{
		{"exactly the 15-minute minimum", t0, at(15 * time.Minute), 1},
		{"one hour", t0, at(time.Hour), 1},
		{"exactly the 24-hour maximum", t0, at(24 * time.Hour), 1},
		{"24 h + 1 s: last two rebalanced", t0, at(24*time.Hour + time.Second), 2},
		{"24 h + 14 min: last window borrows to 15 min", t0, at(24*time.Hour + 14*time.Minute), 2},
		{"24 h + 15 min", t0, at(24*time.Hour + 15*time.Minute), 2},
		{"3 days of catch-up after downtime", t0, at(72 * time.Hour), 3},
		{"35 days (the whole PITR window)", t0, at(35 * 24 * time.Hour), 35},
		{"sub-second times are kept", t0.Add(300 * time.Millisecond), at(2*time.Hour + 700*time.Millisecond), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, err := Split(c.from, c.to)
			require.NoError(t, err)
			assert.Len(t, ws, c.count)
			contiguous(t, ws, c.from, c.to)
		})
	}
	t.Run("rebalanced split keeps full windows first", func(t *testing.T) {
		ws, err := Split(t0, at(48*time.Hour+time.Minute))
		require.NoError(t, err)
		require.Len(t, ws, 3)
		assert.Equal(t, MaxWindow, ws[0].Duration())
		assert.Equal(t, MaxWindow-14*time.Minute, ws[1].Duration())
		assert.Equal(t, MinWindow, ws[2].Duration())
	})
}

func TestSplitRefuses(t *testing.T) {
	_, err := Split(t0, at(15*time.Minute-time.Second))
	assert.ErrorIs(t, err, ErrTooShort, "14m59s is under the minimum")
	_, err = Split(t0, t0)
	assert.ErrorContains(t, err, "end must be after the start")
	_, err = Split(at(time.Hour), t0)
	assert.ErrorContains(t, err, "end must be after the start")
}

func TestCheckRange(t *testing.T) {
	p := PITR{Earliest: t0, Latest: at(10 * time.Hour)}
	assert.NoError(t, CheckRange(t0, at(10*time.Hour), p), "the whole PITR window is fine")
	err := CheckRange(t0.Add(-time.Second), at(time.Hour), p)
	assert.ErrorContains(t, err, "before the table's PITR window")
	err = CheckRange(at(time.Hour), at(10*time.Hour+time.Second), p)
	assert.ErrorContains(t, err, "after the latest restorable time", "a range ending in the future is refused")
}

func TestDecide(t *testing.T) {
	p := PITR{Earliest: t0, Latest: at(30 * time.Hour)}
	inflight := func(status string) *InFlight {
		return &InFlight{Type: Incremental, Window: Window{From: at(time.Hour), To: at(2 * time.Hour)}, Token: "tok", ExportArn: "arn:x", Status: status}
	}

	t.Run("no checkpoint: full export at the latest restorable time", func(t *testing.T) {
		d := Decide(State{}, p)
		assert.Equal(t, StartFull, d.Action)
		assert.Equal(t, p.Latest, d.ExportTime)
		assert.False(t, d.Gap)
	})
	t.Run("checkpoint behind by 29 h: first of two windows, starting at the checkpoint", func(t *testing.T) {
		d := Decide(State{Checkpoint: at(time.Hour)}, p)
		assert.Equal(t, StartIncremental, d.Action)
		assert.Equal(t, Window{From: at(time.Hour), To: at(25 * time.Hour)}, d.Window)
		assert.Equal(t, 1, d.Pending)
		assert.Equal(t, "next window "+d.Window.String()+" (1 more to catch up)", d.Reason)
	})
	t.Run("checkpoint behind by 50 h: three windows, two more pending", func(t *testing.T) {
		d := Decide(State{Checkpoint: at(time.Hour)}, PITR{Earliest: t0, Latest: at(51 * time.Hour)})
		assert.Equal(t, Window{From: at(time.Hour), To: at(25 * time.Hour)}, d.Window)
		assert.Equal(t, 2, d.Pending)
		assert.Contains(t, d.Reason, "(2 more to catch up)")
	})
	t.Run("checkpoint under 15 minutes behind: up to date", func(t *testing.T) {
		d := Decide(State{Checkpoint: at(30*time.Hour - 14*time.Minute)}, p)
		assert.Equal(t, UpToDate, d.Action)
	})
	t.Run("checkpoint exactly at the PITR window start is still exportable", func(t *testing.T) {
		d := Decide(State{Checkpoint: p.Earliest}, p)
		assert.Equal(t, StartIncremental, d.Action)
		assert.Equal(t, p.Earliest, d.Window.From)
	})
	t.Run("checkpoint before the PITR window start: gap, re-baseline", func(t *testing.T) {
		d := Decide(State{Checkpoint: p.Earliest.Add(-time.Second)}, p)
		assert.Equal(t, StartFull, d.Action)
		assert.True(t, d.Gap)
		assert.Contains(t, d.Reason, "GAP")
	})
	t.Run("in flight, never requested: request again", func(t *testing.T) {
		f := inflight("")
		f.ExportArn = ""
		assert.Equal(t, Request, Decide(State{Checkpoint: at(time.Hour), InFlight: f}, p).Action)
	})
	t.Run("in flight, status unknown: poll", func(t *testing.T) {
		assert.Equal(t, Poll, Decide(State{Checkpoint: at(time.Hour), InFlight: inflight("")}, p).Action)
	})
	t.Run("in progress: wait, never start a second window", func(t *testing.T) {
		assert.Equal(t, Wait, Decide(State{Checkpoint: at(time.Hour), InFlight: inflight(InProgress)}, p).Action)
	})
	t.Run("completed: advance", func(t *testing.T) {
		assert.Equal(t, Advance, Decide(State{Checkpoint: at(time.Hour), InFlight: inflight(Completed)}, p).Action)
	})
	t.Run("failed: retry from the same checkpoint", func(t *testing.T) {
		d := Decide(State{Checkpoint: at(time.Hour), InFlight: inflight(Failed)}, p)
		assert.Equal(t, Retry, d.Action)
		assert.Contains(t, d.Reason, "checkpoint stays")
	})
}

// TestDecideSeriesIsGapFree drives Decide through a simulated week with
// downtime, failures and late completions, applying each decision as the
// scheduler would, and checks the exported windows tile time exactly.
func TestDecideSeriesIsGapFree(t *testing.T) {
	s := State{Table: "dev-hoge-user"}
	var exported []Window
	var fullAt time.Time
	now := t0
	for step := 0; step < 2000 && now.Before(at(7*24*time.Hour)); step++ {
		now = now.Add(17 * time.Minute)
		if now.After(at(50*time.Hour)) && now.Before(at(80*time.Hour)) {
			continue // scheduler down for 30 hours
		}
		p := PITR{Earliest: t0, Latest: now.Add(-5 * time.Minute)}
		d := Decide(s, p)
		switch d.Action {
		case StartFull:
			s.InFlight = &InFlight{Type: Full, ExportTime: d.ExportTime, Token: "t", ExportArn: "arn"}
		case StartIncremental:
			s.InFlight = &InFlight{Type: Incremental, Window: d.Window, Token: "t", ExportArn: "arn"}
		case Poll:
			// every third export fails once; the others complete
			if step%3 == 0 {
				s.InFlight.Status = Failed
			} else {
				s.InFlight.Status = Completed
			}
		case Advance:
			if s.InFlight.Type == Full {
				fullAt = s.InFlight.ExportTime
			} else {
				exported = append(exported, s.InFlight.Window)
			}
			s.Checkpoint, s.InFlight, s.Failures = s.InFlight.End(), nil, 0
		case Retry:
			s.InFlight, s.Failures = nil, s.Failures+1
		case UpToDate, Wait, Request:
		}
	}
	require.False(t, fullAt.IsZero(), "the series starts with a full export")
	require.NotEmpty(t, exported)
	contiguous(t, exported, fullAt, exported[len(exported)-1].To)
	assert.Greater(t, exported[len(exported)-1].To, at(6*24*time.Hour), "the series caught up after the downtime")
}

func TestLag(t *testing.T) {
	now := at(10 * time.Hour)
	assert.Equal(t, 4*time.Hour, Lag(State{Checkpoint: at(6 * time.Hour)}, now))
	assert.Equal(t, time.Hour, Lag(State{InFlight: &InFlight{StartedAt: at(9 * time.Hour)}}, now), "before the first full export: time since it was requested")
	assert.Zero(t, Lag(State{}, now))
}
