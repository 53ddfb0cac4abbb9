package interrupt

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestDRFailoverSIGKILLedDuringTheDrain: the built dynops binary runs a
// failover with a 20 s drain; once its countdown is on stderr (the drain's
// progress line, after the fence), it gets SIGKILL (kill -9: no handler
// runs). `dr status` then names the half-done state (the old region fenced,
// the pointer still on it) and how to finish it; the same failover run
// again finishes the drain from the canary's time and flips the pointer.
func TestDRFailoverSIGKILLedDuringTheDrain(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the stand-in pair (test/helpers/drpair) is emulator-only; test/modules/dr drills a real global table")
	}
	p := drpair.New(t, target, drpair.Options{})
	flags := []string{"--table", p.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated"}
	failover := append([]string{"dr", "failover", "--to", drpair.Away, "--yes", "--drain", "20s"}, flags...)
	log := filepath.Join(t.TempDir(), "audit.jsonl")

	run := target.Command(t, failover, harness.AuditLog(log))
	run.Start()
	// The drain's progress line, at the start of a line of either stream.
	countdown := func() bool {
		return strings.Contains("\n"+run.Stdout()+"\n"+run.Stderr(), "\ndrain (seconds after the fence)")
	}
	for deadline := time.Now().Add(90 * time.Second); !countdown(); time.Sleep(50 * time.Millisecond) {
		select {
		case <-run.Done():
			t.Fatalf("dynops ended before its drain countdown: %v\n%s%s", run.Cmd.ProcessState, run.Stdout(), run.Stderr())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no drain countdown within 90 s\n%s%s", run.Stdout(), run.Stderr())
		}
	}
	require.NoError(t, run.Signal(syscall.SIGKILL))
	run.Wait()
	assert.Contains(t, run.Stdout()+run.Stderr(), "fence-old", "the fence was done before the drain")

	assert.True(t, p.Fenced(t, drpair.Home), "the kill left the old region fenced")
	assert.Equal(t, drpair.Home, p.Pointer(t, drpair.Home), "and the pointer on it")

	// Exit 0: finishing the failover to Away is ready (status exits 1 only
	// when no region is).
	out, _, _ := target.Dynops(t, log, append([]string{"dr", "status"}, flags...)...)
	assert.Contains(t, out, "HALF-DONE")
	assert.Contains(t, out, "fenced but the pointer still names it")
	assert.Contains(t, out, "dynops dr failover --table "+p.Table+" --to "+drpair.Away+" --yes")

	out, errOut, code := target.Dynops(t, log, failover...)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	assert.Contains(t, out, "is fenced already (a run that stopped during its drain)")
	assert.Contains(t, out, "had passed since the fence")
	for _, r := range []string{drpair.Home, drpair.Away} {
		assert.Equal(t, drpair.Away, p.Pointer(t, r), "pointer in %s", r)
	}
	out, _, _ = target.Dynops(t, log, append([]string{"dr", "status"}, flags...)...)
	assert.NotContains(t, out, "HALF-DONE")
}
