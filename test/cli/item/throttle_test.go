package item

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
)

// throttledVia starts a fault proxy in front of the emulator that throttles
// op (limit times; 0: always) with reason on table name. The emulator
// cannot throttle by reason: the proxy sends DynamoDB's exception with
// ThrottlingReasons, and the real SDK in the binary reads it.
func throttledVia(t *testing.T, op, reason, name string, limit int) string {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("emulator only: the fault proxy stands in front of the emulator (AWS cannot be made to throttle by reason on demand)")
	}
	arn := "arn:aws:dynamodb:" + target.Region + ":123456789012:table/" + name
	p, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Throttle}, Seed: 1,
		Operations: []string{op}, Limit: limit, Reasons: []faults.ThrottlingReason{{Reason: reason, Resource: arn}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p.URL
}

// finished is the run's `finished` audit record.
func finished(t *testing.T, auditLog string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(auditLog)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["event"] == "finished" {
			return rec
		}
	}
	t.Fatalf("no finished record in %s", raw)
	return nil
}

// Throttles the SDK retries away are named (reason, table, fix: the hot
// key's Contributor Insights) and counted per reason on stderr, in the JSON
// result and in the audit record.
func TestItemGetNamesRetriedThrottleReasons_ProxyEmulatorCannotThrottleByReason(t *testing.T) {
	_, name, auditLog := setup(t, "dev-hoge")
	url := throttledVia(t, "GetItem", "TableReadKeyRangeThroughputExceeded", name, 3)
	out, errOut, code := dynopsAt(t, url, auditLog, "item", "get", "--table", name, "--key", `{"pk": "u1", "sk": 1}`, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Found     bool             `json:"found"`
		Throttles map[string]int64 `json:"throttles"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.True(t, res.Found)
	assert.Equal(t, map[string]int64{"TableReadKeyRangeThroughputExceeded": 3}, res.Throttles)
	assert.Equal(t, 1, strings.Count(errOut, "throttled (TableReadKeyRangeThroughputExceeded, retrying): hot key"), "said once:\n%s", errOut)
	assert.Contains(t, errOut, "3 x TableReadKeyRangeThroughputExceeded on table "+name+": hot key")
	assert.Contains(t, errOut, "--contributor-insights-mode THROTTLED_KEYS")
	counts, _ := finished(t, auditLog)["counts"].(map[string]any)
	assert.Equal(t, float64(3), counts["throttled.TableReadKeyRangeThroughputExceeded"], "audit counts: %v", counts)
}

// A write that stays throttled fails naming the cause (the on-demand
// maximum) and how to raise it; the JSON error and the audit carry the count
// (every attempt of dynops's retry policy).
func TestItemPutFailsNamingTheOnDemandMaximum_ProxyEmulatorCannotThrottleByReason(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	before := snapshot(t, db, name)
	url := throttledVia(t, "PutItem", "TableWriteMaxOnDemandThroughputExceeded", name, 0)
	out, errOut, code := dynopsAt(t, url, auditLog, "item", "put", "--table", name, "--item", `{"pk": "u9", "sk": 1}`, "--yes", "-o", "json")
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "throttled (TableWriteMaxOnDemandThroughputExceeded) on table "+name+": the on-demand maximum")
	assert.Contains(t, errOut, "on_demand_throughput.max_write_request_units")
	var doc struct {
		Error struct {
			Message   string           `json:"message"`
			Throttles map[string]int64 `json:"throttles"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Contains(t, doc.Error.Message, "MaxWriteRequestUnits")
	assert.Equal(t, map[string]int64{"TableWriteMaxOnDemandThroughputExceeded": 10}, doc.Error.Throttles)
	counts, _ := finished(t, auditLog)["counts"].(map[string]any)
	assert.Equal(t, float64(10), counts["throttled.TableWriteMaxOnDemandThroughputExceeded"], "audit counts: %v", counts)
	assert.Equal(t, before, snapshot(t, db, name), "nothing written")
}
