package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock advances by the waits Until asks for, so tests take no time.
type fakeClock struct {
	t     time.Time
	waits []time.Duration
}

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) after(d time.Duration) <-chan time.Time {
	c.waits = append(c.waits, d)
	c.t = c.t.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

func TestUntil(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		doneAfter int // checks until done; -1: never
		checkErr  error
		wantErr   string
		wantWaits []time.Duration
	}{
		{name: "done at once", doneAfter: 1},
		{name: "backoff doubles up to the cap", opts: Options{Interval: time.Second, MaxInterval: 4 * time.Second}, doneAfter: 5,
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}},
		{name: "no cap means a fixed interval", opts: Options{Interval: 2 * time.Second}, doneAfter: 3,
			wantWaits: []time.Duration{2 * time.Second, 2 * time.Second}},
		{name: "default interval is a second", doneAfter: 2, wantWaits: []time.Duration{time.Second}},
		{name: "timeout names what, the last state and how to resume",
			opts:      Options{Interval: time.Second, MaxInterval: time.Second, Timeout: 3 * time.Second, What: "export E", Resume: "run `dynops export wait E`"},
			doneAfter: -1, wantErr: "export E: not done after 3s (--wait-timeout), last state IN_PROGRESS; it goes on in AWS without dynops: run `dynops export wait E`",
			wantWaits: []time.Duration{time.Second, time.Second, time.Second}},
		{name: "the last wait is cut to the timeout", opts: Options{Interval: 2 * time.Second, Timeout: 3 * time.Second, What: "x"},
			doneAfter: -1, wantErr: "not done after 3s", wantWaits: []time.Duration{2 * time.Second, time.Second}},
		{name: "a check error ends the wait", doneAfter: -1, checkErr: errors.New("boom"), wantErr: "boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(0, 0)}
			tc.opts.Now, tc.opts.After = clock.now, clock.after
			var progress []time.Duration
			tc.opts.Progress = func(w time.Duration) { progress = append(progress, w) }
			calls := 0
			err := Until(context.Background(), tc.opts, func(context.Context) (bool, string, error) {
				calls++
				return tc.doneAfter > 0 && calls >= tc.doneAfter, "IN_PROGRESS", tc.checkErr
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr != "" && tc.checkErr == nil && !errors.Is(err, ErrTimeout) {
				t.Errorf("a timeout must wrap ErrTimeout: %v", err)
			}
			if len(clock.waits) != len(tc.wantWaits) {
				t.Fatalf("waits %v, want %v", clock.waits, tc.wantWaits)
			}
			for i := range clock.waits {
				if clock.waits[i] != tc.wantWaits[i] {
					t.Fatalf("waits %v, want %v", clock.waits, tc.wantWaits)
				}
			}
			if tc.checkErr == nil && len(progress) != calls {
				t.Errorf("progress reported %d times for %d checks", len(progress), calls)
			}
		})
	}
}

func TestUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(ctx, Options{What: "import I"}, func(context.Context) (bool, string, error) { return false, "IN_PROGRESS", nil })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "import I (last IN_PROGRESS)") {
		t.Fatalf("err = %v", err)
	}
}

// TestUntilTakesTheCommandsWaitTimeout: a wait whose Options set no Timeout
// ends at the --wait-timeout the command put in ctx (WithWaitTimeout); one
// that sets its own keeps it; without either it waits until done.
func TestUntilTakesTheCommandsWaitTimeout(t *testing.T) {
	var checks int
	// never is not done; it gives up after 1000 checks so that a wait that
	// lost its timeout fails here instead of hanging the test.
	never := func(context.Context) (bool, string, error) {
		if checks++; checks > 1000 {
			return false, "", errors.New("no timeout after 1000 checks")
		}
		return false, "CREATING", nil
	}
	for _, tc := range []struct {
		name      string
		ctx       time.Duration // WithWaitTimeout; 0: none
		timeout   time.Duration // Options.Timeout
		wantAfter string        // "" = no timeout: done after 10 checks
	}{
		{name: "the command's --wait-timeout", ctx: 3 * time.Second, wantAfter: "not done after 3s"},
		{name: "the wait's own timeout wins", ctx: 10 * time.Second, timeout: 2 * time.Second, wantAfter: "not done after 2s"},
		{name: "a zero --wait-timeout is no timeout", ctx: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(0, 0)}
			checks = 0
			ctx := WithWaitTimeout(context.Background(), tc.ctx)
			calls := 0
			check := never
			if tc.wantAfter == "" {
				check = func(context.Context) (bool, string, error) { calls++; return calls == 10, "CREATING", nil }
			}
			err := Until(ctx, Options{What: "table T", Interval: time.Second, Timeout: tc.timeout, Now: clock.now, After: clock.after}, check)
			if tc.wantAfter == "" {
				if err != nil || calls != 10 {
					t.Fatalf("err = %v after %d checks, want done after 10", err, calls)
				}
				return
			}
			if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), tc.wantAfter) {
				t.Fatalf("err = %v, want a timeout %q", err, tc.wantAfter)
			}
		})
	}
}
