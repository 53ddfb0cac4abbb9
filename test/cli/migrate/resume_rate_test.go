package migrate_test

import (
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/harness"
)

// A backfill killed with SIGKILL and resumed reports this run's rate: the
// items this run read (past the checkpoint) over this run's seconds, and
// the total separately (issue 43: a resumed run divided every item read
// since the start by its own time, 79 items/s claimed for 50). No timed
// assertion: the arithmetic is checked through the reported counts and
// seconds, and this run's count through the checkpoint the kill left.
func TestResumedBackfillReportsThisRunsRate(t *testing.T) {
	const n = 600
	d := setup(t, true)
	d.populate(t, n)
	dir := t.TempDir()
	state, auditLog := filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	common := []string{"--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched"}

	// 4 segments of one page each, 100 items/s: the first segment's
	// checkpoint comes after a second or two, the last after six.
	args := append([]string{"migrate", "backfill", "--segments", "4", "--max-writes-per-second", "100"}, common...)
	cmd := target.Command(t, args, harness.AuditLog(auditLog))
	cmd.Start()
	var before int64
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && before == 0; time.Sleep(20 * time.Millisecond) {
		if st, err := migrate.LoadState(state); err == nil && st.Backfill != nil {
			for _, sg := range st.Backfill.Segments {
				before += sg.Read
			}
		}
	}
	require.NoError(t, cmd.Signal(syscall.SIGKILL))
	cmd.Wait()
	st := readState(t, state)
	require.False(t, st.BackfillDone(), "killed part way")
	before = 0
	for _, sg := range st.Backfill.Segments {
		before += sg.Read
	}
	require.Positive(t, before, "a checkpoint was written before the kill")

	out, errOut, code := target.Dynops(t, auditLog, append([]string{"migrate", "backfill", "-o", "json"}, common...)...)
	require.Equal(t, 0, code, errOut)
	var res migrate.BackfillResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.True(t, res.Resumed)
	assert.EqualValues(t, n, res.Read, "every item read in all")
	assert.Equal(t, res.Read-before, res.ReadThisRun, "this run read what was past the checkpoint")
	require.Positive(t, res.Seconds)
	assert.InDelta(t, float64(res.ReadThisRun)/res.Seconds, res.ItemsPerSec, 1e-6, "items/s: this run's items over this run's seconds")
	assert.Less(t, res.ItemsPerSec, float64(res.Read)/res.Seconds, "not every item over this run's time")
	require.Greater(t, res.ActiveSeconds, res.Seconds, "the killed run's time is counted in the overall time")
	assert.InDelta(t, float64(res.Read)/res.ActiveSeconds, res.OverallItemsPerSec, 1e-6, "items/s overall: every item over every run's time")

}
