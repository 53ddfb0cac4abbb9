package runbook

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// stepStarted is the incident's run of step, once its `started` record is
// written.
func stepStarted(t *testing.T, log, incident, step string) *audit.Run {
	t.Helper()
	recs, err := audit.Read(log)
	if err != nil {
		return nil
	}
	for _, r := range audit.Runs(recs) {
		if r.Incident == incident && r.Step == step {
			return &r
		}
	}
	return nil
}

// scanItems reads every item of a table by its user_id.
func scanItems(t *testing.T, db *dynamodb.Client, table string) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			out[it["user_id"].(*types.AttributeValueMemberS).Value] = it
		}
	}
	return out
}

// TestRunbookExportAndCrossRegionRestoreJourney_DDB_DR_01 is the DR
// journey the way an incident goes (issue 43): the application keeps
// writing to the protected prod table through the export, the verify and
// the import; the runbook runs in the built binary without a terminal
// (--yes, the typed name by --confirm) and is SIGKILLed once its export
// step has started, then resumed with the same incident. The resumed run
// exits 0; the DR table holds every item of the source as it was (nothing
// lost: every item acknowledged before the export started, with its
// value), nothing that was never in the source, and the timeline lists
// each step once, the killed one marked interrupted.
func TestRunbookExportAndCrossRegionRestoreJourney_DDB_DR_01(t *testing.T) {
	exportJourney(t, "export")
}

// TestRunbookExportJourneyKilledInImport_DDB_DR_01 is the same journey
// killed in the import step, after its ImportTable created the DR table:
// the resumed step takes over that import (found with ListImports) instead
// of refusing its own table.
func TestRunbookExportJourneyKilledInImport_DDB_DR_01(t *testing.T) {
	if target.OnEmulator() {
		_, err := drDB(t).ListImports(context.Background(), &dynamodb.ListImportsInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		require.Error(t, err, "the emulator answers ListImports now: drop this skip")
		t.Skip("moto has no ListImports (NotImplementedError, measured above): the import a killed step started cannot be found, so the resumed step refuses the table it created (exit 2, naming list-imports); runs on AWS (DYNOPS_TEST_TARGET=aws); the decision: internal/cmd/export/import TestTargetTakenOverFromAKilledImport_ListImportsMissingOnTheEmulator")
	}
	exportJourney(t, "import")
}

func exportJourney(t *testing.T, killIn string) {
	const users = 200
	table, bucket, db := exportFixture(t, users)
	dr := drDB(t)
	t.Cleanup(func() { dropTable(dr, table) })
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	w := startWriter(t, db, table, 4000)
	args := []string{"runbook", "run", "export-and-cross-region-restore", "--incident", incident, "--yes", "--confirm", table,
		"--param", "table=" + table, "--param", "bucket=" + bucket, "--param", "prefix=exports/" + table,
		"--param", "source_region=" + target.Region, "--param", "dr_region=" + drRegion, "--param", "schema=--schema-from " + table,
		"--param", "verify_flags=--data-only", "--param", "accepted_failing_errors=99"}
	// The emulator's exports have no manifests: the break-glass role reads
	// them into the protected table with --unverified-exports (exportTrust).
	who, trust := exportTrust(t)
	if trust != "" {
		args = append(args, "--param", "trust="+trust)
	}

	// 1. The runbook in the built binary, killed once the step started.
	var as []harness.CommandOption
	if who != nil {
		as = append(as, harness.Env(who.env()...))
	}
	killWhen(t, commandWith(t, log, args, as...), "its "+killIn+" step started", func() bool { return stepStarted(t, log, incident, killIn) != nil })
	exportRun := stepStarted(t, log, incident, "export")
	require.NotNil(t, exportRun)

	// 2. Resume: the same command, the same incident, the same caller.
	_, errOut, code := runAs(t, who, log, args...)
	require.Equal(t, 0, code, errOut)
	steps := []string{"export", "verify", "import", "check"}
	for _, s := range steps {
		if s == killIn {
			break
		}
		assert.Contains(t, errOut, s+": done earlier, skipped", "the steps before the killed one are not run again")
	}
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")
	require.Zero(t, w.errs, "the source took every write: the runbook never fenced it")

	// 3. The DR table: the source as it was, nothing lost, nothing invented.
	assertDRTableIsTheExport(t, db, dr, table, users, w.ackedBefore(exportRun.Time))

	// 4. The timeline: each step once, the import marked interrupted.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, 4, md)
	for i, s := range steps {
		state := "ok"
		if s == "check" {
			state = "findings" // the emulator's tables have no alarms
		}
		assert.True(t, strings.HasPrefix(lines[i], "- export-and-cross-region-restore / "+s+": "+state), "step line %q", lines[i])
		assert.Equal(t, s == killIn, strings.Contains(lines[i], "INTERRUPTED 1 time(s)"), lines[i])
	}
	assertOnlyAlarmsMissing(t, log)
}

// assertDRTableIsTheExport: the table restored into dr holds the export of
// the source table exactly: its users as they were, every writer item
// acknowledged before the export started (before), only items of the
// source with their values, and not the writes after the export.
func assertDRTableIsTheExport(t *testing.T, db, dr *dynamodb.Client, table string, users int, before []string) {
	t.Helper()
	source, restored := scanItems(t, db, table), scanItems(t, dr, table)
	for i, it := range fixture.Users(users) {
		id := it["user_id"].(*types.AttributeValueMemberS).Value
		assert.Equal(t, it, restored[id], "user %d is in the DR table as it was", i)
	}
	for _, id := range before {
		assert.Contains(t, restored, id, "writer item %s, acknowledged before the export started, is in the DR table", id)
	}
	for id, it := range restored {
		assert.Equal(t, source[id], it, "DR item %s is an item of the source, with its value", id)
	}
	assert.Less(t, len(restored), len(source), "the writer went on after the export: the DR table is the export, not the live table")
}
