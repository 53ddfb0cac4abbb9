package runbook

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// assertOnlyWriterChanged: the table holds the fixture's users as they
// were and every item the writer acknowledged, and nothing else: a read
// only runbook changed nothing, and lost nothing the application wrote.
func assertOnlyWriterChanged(t *testing.T, db *dynamodb.Client, table string, users int, written []string) {
	t.Helper()
	got := scanItems(t, db, table)
	for i, it := range fixture.Users(users) {
		assert.Equal(t, it, got[it["user_id"].(*types.AttributeValueMemberS).Value], "user %d is as it was", i)
	}
	for _, id := range written {
		assert.Contains(t, got, id, "writer item %s", id)
	}
	assert.Len(t, got, users+len(written), "no item but the users and the writer's")
}

// assertKilledReadOnly: the runbook run the SIGKILL stopped is in the
// audit log as interrupted, and the read-only step it was in left no
// record: a read-only step writes its `started` record late, when it ends
// (audit.Record.Late), and a killed one changed nothing.
func assertKilledReadOnly(t *testing.T, log, incident, step string) {
	t.Helper()
	assert.Nil(t, stepStarted(t, log, incident, step), "the killed read-only step %s left no record", step)
	interrupted := 0
	for _, r := range runs(t, log) {
		if r.Incident == incident && r.Runbook != "" && r.Step == "" && r.Interrupted() {
			interrupted++
		}
	}
	assert.Equal(t, 1, interrupted, "the killed runbook run is interrupted in the audit log")
}

// assertTimeline: the incident's markdown timeline lists each step once
// with its result ("id: result"), and only killed ("": none) interrupted.
func assertTimeline(t *testing.T, log, incident, runbook, killed string, steps ...string) {
	t.Helper()
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, len(steps), md)
	for i, s := range steps {
		assert.True(t, strings.HasPrefix(lines[i], "- "+runbook+" / "+s), "step line %q, want %q", lines[i], s)
		assert.Equal(t, killed != "" && strings.HasPrefix(s, killed+":"), strings.Contains(lines[i], "INTERRUPTED 1 time(s)"), lines[i])
	}
}

// TestRunbookThrottlingJourney_ProxyEmulatorCannotThrottleByReason is the
// throttling journey (issue 43): the application keeps writing to the
// protected table while a fault proxy in front of the emulator throttles
// the runbook's reads with a hot-key reason (the emulator cannot throttle,
// let alone by reason); the runbook in the built binary is SIGKILLed in its
// probe step while the SDK retries a throttled read, then resumed with the
// same incident behind a proxy that throttles again. The resumed run exits
// 0, names the reason and the hot-key path, the table holds exactly the
// users as they were and every write the application made (the runbook
// reads only), and the timeline lists each step once (the killed run is
// interrupted; its read-only probe left no record).
func TestRunbookThrottlingJourney_ProxyEmulatorCannotThrottleByReason(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("emulator only: the fault proxy stands in front of the emulator")
	}
	db, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	throttles := func() faults.Config {
		return faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Throttle}, Seed: 1, Operations: []string{"GetItem"}, Limit: 2,
			Reasons: []faults.ThrottlingReason{{Reason: "TableReadKeyRangeThroughputExceeded", Resource: "arn:aws:dynamodb:" + target.Region + ":123456789012:table/" + table}}}
	}
	w := startWriter(t, db, table, 4000)
	args := []string{"runbook", "run", "throttling", "--incident", incident, "--yes",
		"--param", "table=" + table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key"}

	// 1. Killed at the probe's second GetItem: the SDK's retry of the
	// first, throttled one.
	var mu sync.Mutex
	gets := 0
	cfg := throttles()
	killAtRequest(t, log, killPoint{What: "the probe retried a throttled read", Faults: &cfg, At: func(op string) bool {
		mu.Lock()
		defer mu.Unlock()
		if op == "GetItem" {
			gets++
		}
		return gets == 2
	}}, args...)
	assertKilledReadOnly(t, log, incident, "probe")

	// 2. Resume behind a proxy that throttles again.
	p, err := faults.Start(target.Emulator.URL, throttles())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	_, errOut, code := target.DynopsVia(t, p.URL, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "Runbook throttling complete")
	assert.Contains(t, errOut, "throttled (TableReadKeyRangeThroughputExceeded, retrying): hot key")
	assert.Contains(t, errOut, "2 x TableReadKeyRangeThroughputExceeded on table "+table)
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")
	require.Zero(t, w.errs, "the table took every write")

	// 3. Nothing changed but what the application wrote.
	assertOnlyWriterChanged(t, db, table, 3, written)

	// 4. The timeline (the cause decision runs no command: not a line of it).
	assertTimeline(t, log, incident, "throttling", "", "probe: ok", "check: findings", "hot-partition: ok")
}

// TestRunbookReadinessAlarmJourney_DDB_PITR_01 is the readiness-alarm
// journey (issue 43): the application keeps writing to the restore test's
// protected table; the runbook in the built binary is SIGKILLed in its
// check step (at its first DescribeContinuousBackups), then resumed with
// the same incident. The resumed run exits 0 with the table's PITR read
// back ENABLED, the table holds exactly its items as they were and every
// write the application made, no table was restored from it (the drill is
// by hand), and the timeline lists each step once (the killed run is
// interrupted; its read-only check left no record).
func TestRunbookReadinessAlarmJourney_DDB_PITR_01(t *testing.T) {
	db, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	w := startWriter(t, db, table, 4000)
	args := []string{"runbook", "run", "readiness-alarm", "--incident", incident, "--yes", "--param", "env=prod", "--param", "table=" + table}

	// 1. Killed in the check step (the first), reading a table's PITR.
	killAtRequest(t, log, killPoint{What: "the check step read a table's PITR", At: func(op string) bool {
		return op == "DescribeContinuousBackups"
	}}, args...)
	assertKilledReadOnly(t, log, incident, "check")

	// 2. Resume.
	_, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "Runbook readiness-alarm complete")
	assert.Contains(t, errOut, "check .[0].status == ENABLED: ok", "the restore test table's PITR is on (read back)")
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")
	require.Zero(t, w.errs, "the table took every write")

	// 3. Nothing changed but what the application wrote; nothing restored.
	assertOnlyWriterChanged(t, db, table, 3, written)
	assert.Empty(t, restoredTables(t, db, table), "the runbook restores nothing")
	pitr, err := db.DescribeContinuousBackups(context.Background(), &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	require.NoError(t, err)
	assert.Equal(t, types.PointInTimeRecoveryStatusEnabled, pitr.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus)

	// 4. The timeline.
	assertTimeline(t, log, incident, "readiness-alarm", "", "check: ", "pitr-status: ok")
}
