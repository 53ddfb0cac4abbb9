package runbook

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

const damaged = 600 // corrupted items: enough for the repair step to take seconds on the emulator

// countStatus counts the items whose status is s.
func countStatus(t *testing.T, db *dynamodb.Client, table, s string) int {
	t.Helper()
	var n int32
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &table, Select: types.SelectCount,
		FilterExpression: aws.String("#s = :s"), ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: s}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		n += page.Count
	}
	return int(n)
}

// TestRunbookPitrRestoreKilledAndResumed_DDB_PITR_02 runs pitr-restore up to
// the restore, damages the original (the emulator restores current items
// whatever the time, so the damage comes after the restore here), runs the
// rest in the built binary, scoped to the damage window by the table's
// stream, and SIGKILLs it during the repair step's writes, then resumes: the
// restore is not run again, the repair finishes (the keys the killed run put
// back were written after the window, by the repair itself: already equal,
// not conflicts), the verify step finds the promise kept, and the timeline
// lists each step once with the repair marked interrupted. The killed repair run reads back as
// interrupted (`started` without `finished`) in `dynops audit log`.
func TestRunbookPitrRestoreKilledAndResumed_DDB_PITR_02(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "prod-" + harness.UniqueID() + "-user" // protected: the run confirms it with --confirm
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true, Stream: true, Tags: map[string]string{"env": "prod"}})
	fixture.Put(t, db, table, fixture.Users(damaged+20))
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	dropRestoredWhenDone(t, db, table)
	base := []string{"runbook", "run", "pitr-restore", "--incident", incident, "--param", "table=" + table, "--yes", "--confirm", table}

	// 1. Up to the restore.
	_, errOut, code := target.Dynops(t, log, append(base, "--through", "restore")...)
	require.Equal(t, exitcode.Stopped, code, "--through exits 5, not 0 like a finished run: "+errOut)
	require.Contains(t, errOut, "Stopped after step 2/7 restore (--through restore)")
	require.Equal(t, audit.ResultStopped, runbookRun(t, log, incident).Result, "the audit says stopped, not findings")

	// 2. The bad day: 2 deleted, `damaged` corrupted.
	since := nextSecond()
	fixture.Delete(t, db, table, []map[string]types.AttributeValue{fixture.UserKey(damaged + 1), fixture.UserKey(damaged + 2)})
	bad := fixture.Users(damaged)
	for _, it := range bad {
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
	}
	fixture.Put(t, db, table, bad)
	require.Equal(t, damaged, countStatus(t, db, table, "corrupted"))
	until := nextSecond()
	base = append(base, "--param", fmt.Sprintf("damage=--damage-since %s --damage-until %s --damage-stream", since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano)))

	// 3. Go on in the built binary (every request slowed); SIGKILL once the
	// repair has written.
	cmd := slowCommand(t, log, base...)
	cmd.Start()
	deadline := time.Now().Add(2 * time.Minute)
	for stepStarted(t, log, incident, "repair") == nil {
		select {
		case <-cmd.Done():
			t.Fatalf("the runbook ended (%v) before its repair step started:\n%s", cmd.Cmd.ProcessState, cmd.Stderr())
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no repair step after 2 minutes")
	}
	for countStatus(t, db, table, "corrupted") == damaged {
		select {
		case <-cmd.Done():
			t.Fatalf("the runbook ended (%v) before the repair wrote anything", cmd.Cmd.ProcessState)
		default:
		}
		require.True(t, time.Now().Before(deadline), "the repair wrote nothing in 2 minutes")
	}
	require.NoError(t, cmd.Signal(syscall.SIGKILL))
	<-cmd.Done()
	left := countStatus(t, db, table, "corrupted")
	require.Greater(t, left, 0, "the repair finished before the kill: raise `damaged`")
	t.Logf("killed during the repair: %d of %d corrupted items left", left, damaged)

	// The killed command: `started` without `finished`, listed as interrupted.
	killed := stepStarted(t, log, incident, "repair")
	require.True(t, killed.Interrupted())
	var listed *audit.Run
	for _, r := range auditLogJSON(t, log, "--incident", incident) {
		if r.RunID == killed.RunID {
			listed = &r
		}
	}
	require.NotNil(t, listed, "dynops audit log lists the killed run")
	assert.Equal(t, audit.ResultInterrupted, listed.Result)
	assert.Equal(t, "dynops pitr repair", listed.Command)
	assert.Equal(t, int64(damaged), listed.Plan.Counts["changed"], "the plan's counts are in the started record")
	out, _, code := target.Dynops(t, log, "audit", "log", "--incident", incident)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "INTERRUPTED")

	// 4. Resume: from the repair, not from the start.
	_, errOut, code = target.Dynops(t, log, base...)
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{"status", "restore", "diff", "scope"} {
		assert.Contains(t, errOut, s+": done earlier, skipped")
	}
	assert.Zero(t, countStatus(t, db, table, "corrupted"))
	for _, i := range []int{damaged + 1, damaged + 2} {
		assert.NotNil(t, fixture.Get(t, db, table, fixture.UserKey(i)), "deleted user %d is back", i)
	}

	// 5. The timeline: every step once, the repair marked interrupted.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	t.Log(md)
	steps := stepsSection(md)
	require.Len(t, steps, 6, "one line per step:\n%s", md)
	for i, id := range []string{"status", "restore", "diff", "scope", "repair", "verify"} {
		state := "ok"
		if id == "scope" {
			state = "dry-run" // the repair's plan
		}
		require.True(t, strings.HasPrefix(steps[i], "- pitr-restore / "+id+": "+state), "step line %q", steps[i])
		assert.Equal(t, id == "repair", strings.Contains(steps[i], "INTERRUPTED 1 time(s)"), steps[i])
	}
	assert.Contains(t, md, "# Incident "+incident+": timeline")
	assert.Contains(t, md, "arn:aws:") // the AWS caller on every row
	assert.Contains(t, md, "| INTERRUPTED")

	// Every step's records carry the incident, the runbook, the step and
	// the identity.
	for _, r := range runs(t, log) {
		assert.Equal(t, incident, r.Incident)
		assert.Equal(t, "pitr-restore", r.Runbook)
		assert.NotEmpty(t, r.Identity.CallerARN, r.Command)
		assert.NotEmpty(t, r.Identity.Account, r.Command)
		assert.Contains(t, r.Identity.Regions, target.Region, r.Command)
		if r.Step == "diff" {
			assert.Equal(t, int64(damaged), r.Counts["changed"], "the diff's findings are data")
			assert.Equal(t, int64(2), r.Counts["only_in_source"])
		}
	}
}

// TestSIGKILLAfterFirstWriteLeavesStartedWithoutFinished_DDB_PITR_02: a plain
// destructive command (pitr repair, outside any runbook) killed after its
// first write: its `started` record is on disk, no `finished`, and `dynops
// audit log` lists the run as INTERRUPTED.
func TestSIGKILLAfterFirstWriteLeavesStartedWithoutFinished_DDB_PITR_02(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	from, to := "dev-"+id+"-user", "dev-"+id+"-copy"
	fixture.Create(t, db, fixture.Table{Name: from, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: to, HashKey: "user_id"})
	const n = 400
	fixture.Put(t, db, from, fixture.Users(n))
	bad := fixture.Users(n)
	for _, it := range bad {
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
	}
	fixture.Put(t, db, to, bad)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := slowCommand(t, log, "pitr", "repair", "--from", from, "--to", to, "--all-differences", "--workers", "1",
		"--allow-unrelated-source", "test: a copy, not a restore", "--unscoped", "test: every difference is damage", "--yes")
	cmd.Start()
	deadline := time.Now().Add(2 * time.Minute)
	for countStatus(t, db, to, "corrupted") == n {
		select {
		case <-cmd.Done():
			t.Fatalf("pitr repair ended (%v) before its first write", cmd.Cmd.ProcessState)
		case <-time.After(10 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no write in 2 minutes")
	}
	require.NoError(t, cmd.Signal(syscall.SIGKILL))
	<-cmd.Done()
	require.Greater(t, countStatus(t, db, to, "corrupted"), 0, "the repair finished before the kill")

	recs, err := audit.Read(log)
	require.NoError(t, err)
	require.Len(t, recs, 1, "only the started record")
	assert.Equal(t, audit.EventStarted, recs[0].Event)
	assert.Equal(t, int64(n), recs[0].Plan.Counts["changed"])
	rs := auditLogJSON(t, log)
	require.Len(t, rs, 1)
	assert.Equal(t, audit.ResultInterrupted, rs[0].Result)
	assert.Equal(t, recs[0].RunID, rs[0].RunID)
	out, _, code := target.Dynops(t, log, "audit", "log")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "INTERRUPTED")
	assert.Contains(t, out, "dynops pitr repair")
}

// TestRunbookTimeCorrectedWithinTheIncident_DDB_PITR_02: a restore point
// outside the PITR window is refused by the restore step (exit 2, the
// window read from the service); the same incident then takes a corrected
// --param, records the change in its audit, and goes on. Once the restore
// ran, a new value is refused naming it.
func TestRunbookTimeCorrectedWithinTheIncident_DDB_PITR_02(t *testing.T) {
	_, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	run := func(point string) (string, int) {
		_, errOut, code := target.Dynops(t, log, "runbook", "run", "pitr-restore", "--incident", incident, "--param", "table="+table,
			"--param", "restore_point="+point, "--yes", "--confirm", table, "--through", "restore")
		return errOut, code
	}
	errOut, code := run("--time 2001-01-01T00:00:00Z")
	require.Equal(t, 2, code, errOut)
	refused := 0
	for _, r := range runs(t, log) {
		if r.Incident == incident && r.Step == "restore" && r.Result == audit.ResultRefused {
			refused++
			assert.NotEmpty(t, r.Identity.CallerARN, "the refusal read the window from the service: its caller is recorded (%s)", r.Identity.CallerError)
		}
	}
	require.Equal(t, 1, refused, "the restore step's refusal is in the audit")
	errOut, code = run("--latest")
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "Parameter restore_point changed: --time 2001-01-01T00:00:00Z -> --latest")
	var change *audit.Action
	for _, r := range runs(t, log) {
		for _, a := range r.Actions {
			if r.Incident == incident && a.What == audit.ActRunbookChangeParam {
				change = &a
			}
		}
	}
	require.NotNil(t, change, "the change is in the audit")
	assert.Equal(t, "restore_point", change.Target)
	errOut, code = run("--time 2002-01-01T00:00:00Z")
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "step restore of incident "+incident+" already ran with restore_point=--latest")
}
