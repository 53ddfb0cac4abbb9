package runbook

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRunbookDRRestoreInRegionJourney_DDB_DR_01 is the dr-restore-in-region
// journey (issue 43), the export path (2b): the application keeps writing
// to the protected table in the source region (on the emulator it still
// answers) through the nightly export and the runbook; the runbook runs in
// the built binary without a terminal as the break-glass role (the
// emulator's exports have no manifests: --unverified-exports) and is
// SIGKILLed in its import step (its audit record started) while its
// ImportTable is in flight, the request never delivered (moto has no
// ListImports, so an import the killed step got accepted could not be
// taken over: TestRunbookExportJourneyKilledInImport runs that on AWS),
// then resumed with the same incident. The resumed run
// exits 0; the table in the other region holds the export exactly: every
// item as it was, every write acknowledged before the export started,
// nothing the source never held, and not the writes after the export (the
// RPO); the timeline lists each step once, the import interrupted.
func TestRunbookDRRestoreInRegionJourney_DDB_DR_01(t *testing.T) {
	harness.Long(t, "the dr-restore-in-region journey: an export, a killed import and its resume (about 25 s); TestRunbookDRFailoverJourney_DDB_DR_01 runs in make test")
	const users = 200
	table, bucket, db := exportFixture(t, users)
	dr := drDB(t)
	t.Cleanup(func() { dropTable(dr, table) })
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	w := startWriter(t, db, table, 4000)
	for len(w.ackedBefore(time.Now())) < 3 {
		time.Sleep(20 * time.Millisecond)
	}

	// The nightly export the runbook restores from.
	prefix := "exports/" + table + "/nightly"
	exported := time.Now()
	_, errOut, code := target.Dynops(t, log, "export", "full", "--table", table, "--bucket", bucket, "--prefix", prefix, "--wait")
	require.Equal(t, 0, code, errOut)

	args := []string{"runbook", "run", "dr-restore-in-region", "--incident", incident, "--yes", "--confirm", table,
		"--param", "table=" + table, "--param", "bucket=" + bucket, "--param", "prefix=" + prefix,
		"--param", "source_region=" + target.Region, "--param", "region=" + drRegion, "--param", "schema=--hash-key user_id:S",
		"--param", "tags=--tag env=prod --tag product=t", "--param", "accepted_failing_errors=99"}
	who, trust := exportTrust(t)
	var env []string
	if trust != "" {
		args = append(args, "--param", "trust="+trust)
		env = who.env()
	}

	// 1. Killed in the import step while its ImportTable is in flight,
	// the request dropped: DynamoDB never got it.
	killAtRequest(t, log, killPoint{What: "the import step sent its ImportTable", Env: env, Drop: true,
		At: func(op string) bool { return op == "ImportTable" }}, args...)
	require.NotNil(t, stepStarted(t, log, incident, "import"), "killed in the import step")

	// 2. Resume: the same command, the same incident, the same caller.
	_, errOut, code = runAs(t, who, log, args...)
	require.Equal(t, 0, code, errOut)
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")
	require.Zero(t, w.errs, "the source took every write")

	// 3. The restored table is the export: nothing lost, nothing invented.
	before := w.ackedBefore(exported)
	require.NotEmpty(t, before, "the writer wrote before the export")
	assertDRTableIsTheExport(t, db, dr, table, users, before)

	// 4. The timeline: each step once, the import interrupted.
	assertTimeline(t, log, incident, "dr-restore-in-region", "import", "import: ok", "check: findings")
	assertOnlyAlarmsMissing(t, log)
}
