package runbook

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRunbookThrottling_ProxyEmulatorCannotThrottleByReason: the throttling
// runbook runs to the end on a prod table while a fault proxy in front of
// the emulator throttles its reads with a hot-key reason (the emulator
// cannot throttle, let alone by reason): the probe names the reason, the
// table and Contributor Insights, counts it, and the hot-key path runs.
func TestRunbookThrottling_ProxyEmulatorCannotThrottleByReason(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("emulator only: the fault proxy stands in front of the emulator")
	}
	_, table := prodTable(t)
	p, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Throttle}, Seed: 1,
		Operations: []string{"GetItem"}, Limit: 2, Reasons: []faults.ThrottlingReason{
			{Reason: "TableReadKeyRangeThroughputExceeded", Resource: "arn:aws:dynamodb:" + target.Region + ":123456789012:table/" + table}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	_, errOut, code := target.DynopsVia(t, p.URL, log, "runbook", "run", "throttling", "--incident", "INC-"+harness.UniqueID(), "--yes",
		"--param", "table="+table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "Runbook throttling complete")
	assert.Contains(t, errOut, "throttled (TableReadKeyRangeThroughputExceeded, retrying): hot key")
	assert.Contains(t, errOut, "2 x TableReadKeyRangeThroughputExceeded on table "+table)
	assert.Contains(t, errOut, "THROTTLED_KEYS")
	faulted, _ := p.Counts()
	assert.Equal(t, 2, faulted[faults.Throttle], "the proxy throttled the probe twice")
}
