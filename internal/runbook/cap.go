package runbook

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// CapWindow is the window of the destructive-run cap: at most N destructive
// steps on protected targets of one env in any CapWindow.
const CapWindow = time.Hour

// DestructiveRun is one destructive step on protected targets, counted by
// the cap of its env.
type DestructiveRun struct {
	Env      string    `json:"env"`
	Incident string    `json:"incident"`
	Runbook  string    `json:"runbook"`
	Step     string    `json:"step"`
	Caller   string    `json:"caller"`
	At       time.Time `json:"at"`
}

// CapCounter counts destructive runs where the whole team's runs are seen.
type CapCounter interface {
	// ClaimDestructiveRun records run as one of at most limit destructive
	// runs of its env in the window, or returns a *CapError when limit
	// runs of the last window are recorded already.
	ClaimDestructiveRun(ctx context.Context, limit int, run DestructiveRun) error
	// DestructiveRuns are the runs of env recorded in the window ending now.
	DestructiveRuns(ctx context.Context, env string, limit int) ([]DestructiveRun, error)
}

// CapError is a destructive step refused by its env's cap (exit 2).
type CapError struct {
	Step  string
	Env   string
	Limit int
	From  string // where the cap is set (flag or config key)
	Used  []DestructiveRun
}

func (e *CapError) Error() string {
	var used []string
	next := time.Time{}
	for _, u := range e.Used {
		used = append(used, fmt.Sprintf("%s/%s by %s at %s", u.Incident, u.Step, u.Caller, u.At.Format(time.RFC3339)))
		if t := u.At.Add(CapWindow); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return fmt.Sprintf("step %s stopped: env %s allows %d destructive run(s) on protected targets per hour (%s), and the last hour had %d (%s); nothing more was changed. "+
		"Run the same command again after %s, or, if this cannot wait, as the break-glass role with --break-glass REASON",
		e.Step, e.Env, e.Limit, e.From, len(e.Used), strings.Join(used, "; "), next.Format(time.RFC3339))
}

// capKey is the object of slot i of env's cap: the cap is limit slots,
// each holding the last run that took it; a slot whose run is older than
// the window is free. Slots are taken with the store's conditional writes,
// so two engineers cannot both take the last one.
func (s *S3Store) capKey(env string, i int) string {
	return fmt.Sprintf("%s_limits/%s/destructive-run-%d.json", s.Prefix, env, i)
}

// ClaimDestructiveRun takes the first free slot of run.Env's cap.
func (s *S3Store) ClaimDestructiveRun(ctx context.Context, limit int, run DestructiveRun) error {
	now := s.now()
	run.At = now
	if run.Caller == "" {
		run.Caller = s.Caller
	}
	var used []DestructiveRun
	for i := range limit {
		key := s.capKey(run.Env, i)
		var cur DestructiveRun
		found, err := s.get(ctx, key, &cur)
		if err != nil {
			return err
		}
		if found && now.Sub(cur.At) < CapWindow {
			used = append(used, cur)
			continue
		}
		err = s.put(ctx, key, run)
		var ce *ConflictError
		if errors.As(err, &ce) { // another run took this slot between our read and write
			if ok, rerr := s.get(ctx, key, &cur); rerr == nil && ok {
				used = append(used, cur)
			}
			continue
		}
		return err
	}
	sort.Slice(used, func(i, j int) bool { return used[i].At.Before(used[j].At) })
	return &CapError{Step: run.Step, Env: run.Env, Limit: limit, Used: used}
}

// DestructiveRuns are the runs of env in the last window (slots 0 to limit-1).
func (s *S3Store) DestructiveRuns(ctx context.Context, env string, limit int) ([]DestructiveRun, error) {
	now := s.now()
	var out []DestructiveRun
	for i := range limit {
		var cur DestructiveRun
		found, err := s.get(ctx, s.capKey(env, i), &cur)
		if err != nil {
			return nil, err
		}
		if found && now.Sub(cur.At) < CapWindow {
			out = append(out, cur)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

var _ CapCounter = (*S3Store)(nil)
