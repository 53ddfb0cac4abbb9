// Package poll is the one poller of dynops: it calls a check until it reports
// done, waiting between calls with a capped exponential backoff, within an
// optional timeout (a command's --wait-timeout), and reports the time waited
// after each check so long waits can show progress.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is wrapped by the error Until returns when Timeout passes.
var ErrTimeout = errors.New("wait timed out")

// Options shape a wait.
type Options struct {
	// Interval is the first wait between checks (default 1s).
	Interval time.Duration
	// MaxInterval caps the doubling of the wait (default: Interval, no backoff).
	MaxInterval time.Duration
	// Timeout ends the wait with a *TimeoutError (0: only the context ends it).
	Timeout time.Duration
	// What is what is awaited, for errors (e.g. "export arn:aws:...").
	What string
	// Resume says how to continue after a timeout (e.g. "run `dynops export wait ARN`").
	Resume string
	// Flag is the flag that sets Timeout, named in a timeout error
	// (default --wait-timeout).
	Flag string
	// Progress is called after each successful check with the time waited so far.
	Progress func(waited time.Duration)
	// Now and After replace the clock in tests (defaults: time.Now, time.After).
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// TimeoutError says that a wait passed its timeout; the awaited thing goes on.
type TimeoutError struct {
	What   string
	After  time.Duration
	Last   string // the last state seen, if the check reported one
	Resume string
	Flag   string // the flag that bounds the wait ("": --wait-timeout)
}

func (e *TimeoutError) Error() string {
	flag := e.Flag
	if flag == "" {
		flag = "--wait-timeout"
	}
	msg := fmt.Sprintf("%s: not done after %s (%s)", e.What, e.After.Round(time.Second), flag)
	if e.Last != "" {
		msg += ", last state " + e.Last
	}
	msg += "; it goes on in AWS without dynops"
	if e.Resume != "" {
		msg += ": " + e.Resume
	}
	return msg
}

func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// Check reports whether the awaited thing is done; state (optional) is the
// last state seen, named in a timeout error.
type Check func(ctx context.Context) (done bool, state string, err error)

// Until calls check until it reports done or fails, and returns check's
// error, a *TimeoutError, or the context's error wrapped with what was awaited.
func Until(ctx context.Context, o Options, check Check) error {
	now, after := o.Now, o.After
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	delay := o.Interval
	if delay <= 0 {
		delay = time.Second
	}
	maxDelay := max(o.MaxInterval, delay)
	if o.Timeout <= 0 {
		o.Timeout = WaitTimeout(ctx)
	}
	start := now()
	for {
		done, state, err := check(ctx)
		if err != nil {
			return err
		}
		waited := now().Sub(start)
		if o.Progress != nil {
			o.Progress(waited)
		}
		if done {
			return nil
		}
		wait := delay
		if o.Timeout > 0 {
			left := o.Timeout - waited
			if left <= 0 {
				return &TimeoutError{What: o.What, After: waited, Last: state, Resume: o.Resume, Flag: o.Flag}
			}
			wait = min(wait, left)
		}
		select {
		case <-ctx.Done():
			if state != "" {
				return fmt.Errorf("waiting for %s (last %s): %w", o.What, state, context.Cause(ctx))
			}
			return fmt.Errorf("waiting for %s: %w", o.What, context.Cause(ctx))
		case <-after(wait):
		}
		delay = min(delay*2, maxDelay)
	}
}

type waitTimeoutKey struct{}

// WithWaitTimeout returns ctx carrying a command's --wait-timeout: every
// Until under it whose Options set no Timeout ends after d. Commands set it
// once; the domain packages' waits need no extra parameter.
func WithWaitTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, waitTimeoutKey{}, d)
}

// WaitTimeout returns the --wait-timeout ctx carries, or 0.
func WaitTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(waitTimeoutKey{}).(time.Duration)
	return d
}
