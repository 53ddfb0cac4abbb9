package runbook

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRunbookWithoutYesStopsBeforeItsFirstChange: without --yes and without
// a terminal, a runbook runs its read-only steps, shows its first
// destructive step's dry run and stops there, exit 0, nothing changed (read
// back: no restored table); --confirm alone does not stand for --yes.
func TestRunbookWithoutYesStopsBeforeItsFirstChange(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true})
	fixture.Put(t, db, table, fixture.Users(5))
	before := fixture.TableNames(t, db)
	for _, extra := range [][]string{nil, {"--confirm", table}} {
		t.Run(strings.Join(append([]string{"no --yes"}, extra...), " "), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			args := append([]string{"runbook", "run", "pitr-restore", "--incident", "INC-" + harness.UniqueID(), "--param", "table=" + table}, extra...)
			out, errOut, code := target.Dynops(t, log, args...)
			require.Equal(t, exitcode.Stopped, code, "a run stopped before a change exits 5, not 0 like a finished run: "+errOut)
			assert.Contains(t, errOut, "Stopped before step restore, which changes things. Nothing more was changed.")
			assert.Contains(t, errOut, "   result: ", "each step's result is one summary line")
			assert.Contains(t, errOut, "dry_run=true", "the restore's dry run is shown in its summary")
			assert.NotContains(t, out, `"dry_run"`, "the full JSON is for -o json and the state file, not a person's screen")
			assert.Equal(t, before, fixture.TableNames(t, db), "no table restored (read back)")
			assert.Equal(t, audit.ResultStopped, runbookRun(t, log, args[4]).Result, "the audit says stopped, not findings")
		})
	}
}

// TestRunbookDecision_DDB_PITR_02: pitr-restore's path decision, given with
// --decide path=cutover, ends the run after the diff (the cutover is by
// hand): repair and verify are skipped as not on this path, the choice is in
// the audit; a --decide naming no choice is bad input before any step.
func TestRunbookDecision_DDB_PITR_02(t *testing.T) {
	_, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	base := []string{"runbook", "run", "pitr-restore", "--param", "table=" + table, "--yes", "--confirm", table}

	_, errOut, code := target.Dynops(t, log, append(base, "--incident", "INC-"+harness.UniqueID(), "--decide", "path=rollback")...)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "path=repair|cutover", "the refusal names the decision and its choices")

	incident := "INC-" + harness.UniqueID()
	_, errOut, code = target.Dynops(t, log, append(base, "--incident", incident, "--decide", "path=cutover")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "path: decided cutover (--decide)")
	assert.Contains(t, errOut, "repair: not on this path (path=cutover), skipped")
	assert.Contains(t, errOut, "verify: not on this path (path=cutover), skipped")
	rec := runbookRun(t, log, incident)
	found := false
	for _, a := range rec.Actions {
		found = found || a.What == audit.ActRunbookDecide && a.Target == "path"
	}
	assert.True(t, found, "the decision is in the run's audit record: %+v", rec.Actions)
}
