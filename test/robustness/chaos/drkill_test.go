package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/harness"
)

// drSwitch is one kill family over a dr switch: how to prepare a fresh pair
// (fault-free), the switch to kill, and the finishing command a half-done
// state is completed with instead of a re-run.
type drSwitch struct {
	family string
	prep   func(t *testing.T, p drpair.Pair)
	args   []string // the switch (the pair's flags appended)
	undo   []string // completes a half-done switch the other way
}

func drPairFlags(p drpair.Pair) []string {
	return []string{"--table", p.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated"}
}

// TestDRKilledAndRerun: the built binary running dr failover (and
// failback) is SIGKILLed at seeded kill points, counted in requests: for
// the odd seeds anywhere in the run, for the even seeds between the fence
// (the first PutResourcePolicy) and the pointer flip (the first SSM
// PutParameter after it). After each kill `dr status` must name a pointer
// that names a fenced region as HALF-DONE (and must, for the even seeds,
// find exactly that); then a re-run of the same switch, or for every other
// half-done failover a failback, completes it: the final state equals the
// fault-free run's (or, after the failback, the state before the switch).
func TestDRKilledAndRerun(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the stand-in pair (test/helpers/drpair) is emulator-only; test/modules/dr drills a real global table")
	}
	if os.Getenv("DYNOPS_CHAOS") != "full" {
		t.Skip("make chaos only (the CI budget): a fresh dr pair per kill point; internal/failover's TestFailoverKilledBetweenFenceAndFlip covers the half-done state in make test")
	}
	switches := []drSwitch{
		{family: "dr failover", prep: func(t *testing.T, p drpair.Pair) {
			p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
		}, args: []string{"dr", "failover", "--to", drpair.Away, "--yes"}, undo: []string{"dr", "failback", "--to", drpair.Home, "--yes"}},
		{family: "dr failback", prep: func(t *testing.T, p drpair.Pair) {
			p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
			out, errOut, code := dynops(t, target.Emulator.URL, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, drPairFlags(p)...)...)
			require.Equal(t, 0, code, "%s%s", out, errOut)
			p.PublishLatency(t, drpair.Away, drpair.Home, 250, 750)
		}, args: []string{"dr", "failback", "--to", drpair.Home, "--yes"}},
	}
	// The two families run side by side (separate pairs): most of their time
	// is the emulator's and the binary's waits.
	t.Run("families", func(t *testing.T) {
		for _, sw := range switches {
			t.Run(sw.family, func(t *testing.T) {
				t.Parallel()
				killSwitch(t, sw)
			})
		}
	})
	report(t)
}

// killSwitch is one dr kill family: the fault-free run, then killSeeds()
// kills, each checked in dr status and finished.
func killSwitch(t *testing.T, sw drSwitch) {
	// The fault-free run: its final state, and its requests.
	p := drpair.New(t, target, drpair.Options{})
	sw.prep(t, p)
	before := drState(t, p)
	t0 := time.Now()
	ops := observedRun(t, append(append([]string{}, sw.args...), drPairFlags(p)...)...)
	want := drState(t, p)
	fence, window := fenceWindow(ops)
	require.GreaterOrEqual(t, fence, 0, "no PutResourcePolicy (the fence) in the run's requests: %v", ops)
	require.Positive(t, window, "no request between the fence and the pointer flip: %v", ops)
	lastPut, lastPolicy := lastOf(ops, "PutParameter"), max(lastOf(ops, "PutResourcePolicy"), lastOf(ops, "DeleteResourcePolicy"))
	// The kills (request numbers from 1, relative to the baseline run) that
	// must leave a half-done state: after the fence landed and before the
	// switch's last change is sent (a failover's last pointer write, a
	// failback's unfence of the old region); and those after the last
	// change landed, which must leave none. A kill at a change's own
	// request may or may not let it land: either.
	halfFrom, halfTo, cleanFrom := fence+2, lastPut, lastPut+2
	failback := sw.args[1] == "failback"
	if failback {
		halfTo, cleanFrom = lastPolicy, lastPolicy+2
		require.Greater(t, lastPolicy, lastPut+1, "a failback unfences the old region after its pointer flip: %v", ops)
	}
	t.Logf("%s: %d requests in %s, the fence at %d, %d requests before the pointer flip, half-done from %d to %d", sw.family, len(ops), time.Since(t0).Round(time.Millisecond), fence+1, window, halfFrom, halfTo)

	halfDone, between, afterFlip, undone, done := 0, 0, 0, 0, 0
	for seed := 1; seed <= killSeeds(); seed++ {
		rnd := rand.New(rand.NewPCG(uint64(seed), 16))
		aimed := seed%2 == 0
		at, afterFence := 1+rnd.IntN(len(ops)), 1+rnd.IntN(window)
		// A failback's every fourth seed aims after its pointer flip and
		// before its unfence of the old region: the state that looked
		// like a finished failover.
		aimedAfterFlip := failback && seed%4 == 0
		if aimedAfterFlip {
			afterFence = lastPut + 2 + rnd.IntN(lastPolicy-lastPut-1) - (fence + 1)
		}
		p := drpair.New(t, target, drpair.Options{})
		sw.prep(t, p)
		args := append(append([]string{}, sw.args...), drPairFlags(p)...)
		var cmd *harness.Proc
		// The request numbers of the fence and of the kill in this run
		// (written by the proxy's handlers).
		var fenced, killedAt atomic.Int64
		proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(n int, op string) {
			if op == "PutResourcePolicy" && fenced.Load() == 0 {
				fenced.Store(int64(n))
			}
			if f := int(fenced.Load()); (!aimed && n == at) || (aimed && f > 0 && n == f+afterFence) {
				killedAt.Store(int64(n))
				killAt(cmd)
			}
		}})
		require.NoError(t, err)
		cmd = process(t, proxy.URL, args...)
		killed := killedRun(t, cmd)
		proxy.Close()

		status, _, _ := dynops(t, target.Emulator.URL, append([]string{"dr", "status"}, drPairFlags(p)...)...)
		state := drState(t, p)
		half := strings.Contains(status, "HALF-DONE")
		activeFenced := activeIsFenced(state)
		require.Equal(t, activeFenced, strings.Contains(status, "fenced but the pointer still names it"),
			"seed %d: dr status must name a fenced active region as half-done (state %s):\n%s", seed, state, status)
		if aimed {
			require.True(t, killed, "seed %d: the aimed kill did not land", seed)
		}
		// Where the kill came, relative to the baseline run's requests.
		rel := -1
		if f := int(fenced.Load()); killedAt.Load() > 0 && f > 0 {
			rel = int(killedAt.Load()) - f + fence + 1
		}
		switch {
		case rel >= halfFrom && rel <= halfTo:
			require.True(t, half, "seed %d: killed at request %d (baseline %d, after the fence and before the last change %d), dr status does not say HALF-DONE (state %s):\n%s", seed, killedAt.Load(), rel, halfTo+1, state, status)
		case !killed || rel >= cleanFrom || (killedAt.Load() > 0 && fenced.Load() == 0):
			require.False(t, half, "seed %d: killed at request %d (baseline %d: before the fence, or after the last change), dr status says HALF-DONE (state %s):\n%s", seed, killedAt.Load(), rel, state, status)
		}
		if aimedAfterFlip {
			require.Contains(t, status, "still carries the temporary fence of a failback", "seed %d: a failback killed after its flip, before unfencing the old region (state %s):\n%s", seed, state, status)
			afterFlip++
		} else if aimed {
			between++
		}
		if half {
			halfDone++
		}
		finish, wantNow := args, want
		if half && sw.undo != nil && seed%4 == 0 {
			finish, wantNow = append(append([]string{}, sw.undo...), drPairFlags(p)...), before
			undone++
		}
		t0 := time.Now()
		out, code := combined(t, target.Emulator.URL, finish...)
		if code != 0 && strings.Contains(out, "writes are already meant to go to") {
			// The kill came after the last step's change: nothing is
			// fenced and the pointer names --to, so the re-run is
			// refused before any step, saying so; the state must
			// already be the final one.
			require.Equal(t, wantNow, state, "seed %d: the re-run was refused as already done: %s", seed, out)
			done++
		} else {
			require.Zero(t, code, "seed %d: %v after the kill (state %s): %s", seed, finish[:2], state, out)
		}
		t.Logf("seed %d: killed at request %d (aimed between fence and flip: %v; exited by the kill: %v), dr status half-done %v (state %s), finished by %v in %s", seed, killedAt.Load(), aimed, killed, half, state, finish[:2], time.Since(t0).Round(time.Millisecond))
		got := drState(t, p)
		require.Equal(t, wantNow, got, "seed %d: killed at request %d (aimed %v), finished with %v", seed, killedAt.Load(), aimed, finish[:2])
		status, _, _ = dynops(t, target.Emulator.URL, append([]string{"dr", "status"}, drPairFlags(p)...)...)
		require.NotContains(t, status, "HALF-DONE", "seed %d: still half-done after %v", seed, finish[:2])
	}
	aims := fmt.Sprintf("%d aimed between fence and flip", between)
	if failback {
		aims += fmt.Sprintf(", %d between the flip and the unfence of the old region", afterFlip)
	}
	record(sw.family, fmt.Sprintf("SIGKILL x%d", killSeeds()), fmt.Sprintf("%d kills (%s), HALF-DONE in dr status after %d (every kill between the fence and the last change); %d undone by a failback (back to %s), %d already done (re-run refused as such), the rest finished by a re-run (%s)", killSeeds(), aims, halfDone, undone, before, done, want), true)
}

// lastOf is the index of op's last occurrence in ops, -1 when none.
func lastOf(ops []string, op string) int {
	last := -1
	for i, o := range ops {
		if o == op {
			last = i
		}
	}
	return last
}

// fenceWindow is the index of the run's first PutResourcePolicy (the
// fence) and the number of requests after it before the first SSM
// PutParameter (the pointer flip).
func fenceWindow(ops []string) (int, int) {
	fence := -1
	for i, op := range ops {
		if op == "PutResourcePolicy" && fence < 0 {
			fence = i
		}
		if op == "PutParameter" && fence >= 0 {
			return fence, i - fence - 1
		}
	}
	return fence, 0
}

// activeIsFenced reads drState's line: the active region among the fenced.
func activeIsFenced(state string) bool {
	var active, fenced string
	_, _ = fmt.Sscanf(state, "active %s", &active)
	active = strings.TrimSuffix(active, ",")
	if i := strings.Index(state, "fenced ["); i >= 0 {
		fenced = state[i:]
	}
	return active != "" && strings.Contains(fenced, active)
}

// observedRun runs the built binary uninterrupted through an observing
// proxy and returns its requests' operations, in order.
func observedRun(t *testing.T, args ...string) []string {
	var (
		mu  sync.Mutex
		ops []string
	)
	obs, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
	}})
	require.NoError(t, err)
	out, code := combined(t, obs.URL, args...)
	obs.Close()
	require.Zero(t, code, "the uninterrupted run: %s", out)
	mu.Lock()
	defer mu.Unlock()
	return ops
}
