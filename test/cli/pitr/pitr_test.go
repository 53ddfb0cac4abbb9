// Package pitr tests the `dynops pitr` and `dynops table diff` commands end to
// end, in-process, against the target (the local emulator by default), the
// way an on-call engineer runs them: restore, diff, repair, with the audit
// log, dry runs and the prod confirmation. bench_test.go measures diff and
// repair throughput beside the AWS CLI.
package pitr

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/pitrtime"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

func lastRecord(t *testing.T, log string) audit.Record {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[len(recs)-1]
}

func actions(rec audit.Record) []string {
	var w []string
	for _, a := range rec.Actions {
		w = append(w, a.What)
	}
	return w
}

func source(t *testing.T, db *dynamodb.Client, env string) string {
	t.Helper()
	name := env + "-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id", GSI: "email", PITR: true})
	fixture.Put(t, db, name, fixture.Users(40))
	// Like the tables the modules make: the guideline's settings.
	ctx := context.Background()
	have, err := tablesettings.Capture(ctx, db, name)
	require.NoError(t, err)
	require.NoError(t, tablesettings.Apply(ctx, db, name, tablesettings.Plan(have, tablesettings.Guideline(map[string]string{"owner": "hoge-team"})), nil))
	return name
}

func TestRestoreDryRunChangesNothing(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "dev")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	before := fixture.TableNames(t, db)

	out, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Restore plan")
	assert.Contains(t, out, "billing mode       PAY_PER_REQUEST")
	assert.Contains(t, out, "gsi1 (GSI)")
	assert.Contains(t, out, "restored-from="+src)
	assert.Contains(t, out, "Dry run: nothing was changed")
	assert.Contains(t, errOut, "audit: record appended to "+log)
	assert.Equal(t, before, fixture.TableNames(t, db), "a dry run creates no table")

	rec := lastRecord(t, log)
	assert.Equal(t, "dynops pitr restore", rec.Command)
	assert.True(t, rec.DryRun)
	assert.Equal(t, "dry-run", rec.Result)
	assert.Equal(t, []string{"protection", "restore-table"}, actions(rec), "the protection decision and the planned restore are recorded")
	assert.Contains(t, fmt.Sprint(rec.Actions[0].Detail), "an unprotected env", "the decision carries its reason")

	t.Run("json", func(t *testing.T) {
		out, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var doc struct {
			DryRun bool         `json:"dry_run"`
			Plan   restore.Plan `json:"plan"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), "one JSON document on stdout")
		assert.True(t, doc.DryRun)
		assert.Equal(t, src, doc.Plan.Source)
		assert.Equal(t, "PAY_PER_REQUEST", string(doc.Plan.Input.BillingModeOverride))
		assert.Equal(t, before, fixture.TableNames(t, db))
	})
}

func TestRestoreRefusesBadInput(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "dev")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	before := fixture.TableNames(t, db)
	cases := map[string]struct {
		args []string
		msg  string
	}{
		"time outside the window": {[]string{"--table", src, "--time", "2001-01-01T00:00:00Z", "--yes"}, "is outside the restorable window of " + src},
		"target exists":           {[]string{"--table", src, "--latest", "--target", src, "--yes"}, "target table already exists: " + src},
		"no time":                 {[]string{"--table", src}, "exactly one of --time RFC3339"},
		"both time and latest":    {[]string{"--table", src, "--latest", "--time", "2026-11-21T09:30:00Z"}, "exactly one of --time"},
		"time not RFC3339":        {[]string{"--table", src, "--time", "yesterday"}, `--time "yesterday" is not an RFC3339 time`},
		"no table":                {[]string{"--latest"}, "needs --table NAME"},
		"--resume without target": {[]string{"--table", src, "--latest", "--resume", "--yes"}, "--resume needs --target NAME"},
		"--resume, not a restore": {[]string{"--table", src, "--latest", "--target", src, "--resume", "--yes"}, "target table already exists: " + src + " is a table that is not a point-in-time restore"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := target.Dynops(t, log, append([]string{"pitr", "restore"}, c.args...)...)
			assert.Equal(t, 2, code, "bad input exits 2")
			assert.Contains(t, errOut, c.msg)
		})
	}
	assert.Equal(t, before, fixture.TableNames(t, db), "nothing was created")
	rec := lastRecord(t, log)
	assert.Equal(t, "refused", rec.Result, "bad input: refused, nothing changed")
}

func TestRestoreProdNeedsTypedConfirmation(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "prod")
	dst := src + "-restored-drill"
	fixture.Cleanup(t, db, dst)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	before := fixture.TableNames(t, db)

	_, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes")
	assert.Equal(t, 2, code, "a missing typed name is a usage error")
	assert.Contains(t, errOut, "pass --confirm "+src)
	_, errOut, code = target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes", "--confirm", dst)
	assert.Equal(t, 2, code, "a --confirm that does not match is a usage error")
	assert.Contains(t, errOut, "does not match")
	assert.Equal(t, before, fixture.TableNames(t, db), "a non-interactive prod run without the right --confirm changes nothing")

	out, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes", "--confirm", src, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var res restore.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, dst, res.Plan.Target)
	assert.True(t, res.Settings.PITR)
	assert.True(t, res.Settings.DeletionProtection)
	assert.Equal(t, src, res.Settings.Tags[restore.TagRestoredFrom])
	assert.Contains(t, res.Terraform, `to = module.stack.module.table["`)
	assert.Contains(t, fixture.TableNames(t, db), dst)

	rec := lastRecord(t, log)
	assert.False(t, rec.DryRun)
	assert.Equal(t, "ok", rec.Result)
	assert.Equal(t, "protection", rec.Actions[0].What)
	assert.Equal(t, src, rec.Actions[0].Target)
	assert.Contains(t, fmt.Sprint(rec.Actions[0].Detail), `starts with "prod"`, "the audit says why the source is protected")
	assert.Equal(t, "restore-table", rec.Actions[1].What)
	assert.Equal(t, dst, rec.Actions[1].Target)
	assert.Equal(t, []string{"protection", "restore-table", "apply-setting", "apply-setting", "apply-setting", "apply-setting", "apply-setting", "apply-setting"}, actions(rec),
		"the restore, then stream, PITR, TTL, tags, deletion protection and the restored-from marker, one record each")
}

func TestStatus(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	on := source(t, db, "dev")
	off := "dev-" + harness.UniqueID() + "-work"
	fixture.Create(t, db, fixture.Table{Name: off, HashKey: "user_id"})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, "pitr", "status", "--table", on, "--table", off, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var ws []restore.Window
	require.NoError(t, json.Unmarshal([]byte(out), &ws))
	require.Len(t, ws, 2)
	assert.Equal(t, "ENABLED", ws[0].Status)
	assert.Equal(t, int32(35), ws[0].RecoveryPeriodInDays)
	assert.NotNil(t, ws[0].Earliest)
	assert.NotNil(t, ws[0].Latest)
	assert.Equal(t, "DISABLED", ws[1].Status)
	assert.Nil(t, ws[1].Latest)

	out, _, code = target.Dynops(t, log, "pitr", "status", "--table", on)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "EARLIEST RESTORABLE (UTC)")
	assert.Contains(t, out, "35 days")
}

// TestStatusJQ: --jq on a command that reads AWS (the emulator): the
// documented line of docs/commands.md gives the latest restorable time of
// the table, a select gives the names of the tables without PITR.
func TestStatusJQ(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	on := source(t, db, "dev")
	off := "dev-" + harness.UniqueID() + "-work"
	fixture.Create(t, db, fixture.Table{Name: off, HashKey: "user_id"})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, "pitr", "status", "--table", on, "-o", "json", "--jq", ".[0].latest_restorable_time")
	require.Equal(t, 0, code, errOut)
	_, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(out))
	assert.NoError(t, err, "one RFC 3339 time, unquoted: %q", out)
	out, errOut, code = target.Dynops(t, log, "pitr", "status", "--table", on, "--table", off, "-o", "json", "--jq", `.[] | select(.status != "ENABLED") | .table`)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, off+"\n", out)
}

// TestWindowBoundsAsPrinted_DDB_PITR_01: the restorable window is printed to
// the millisecond, and both bounds copied from `pitr status` are accepted by
// `pitr restore --time` as they are; a millisecond outside is refused.
func TestWindowBoundsAsPrinted_DDB_PITR_01(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "dev")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, "pitr", "status", "--table", src)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	cols := strings.Fields(lines[1])
	earliest, latest := cols[len(cols)-2], cols[len(cols)-1]
	for _, printed := range []string{earliest, latest} {
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, printed, "printed to the millisecond")
	}
	for _, bound := range []string{earliest, latest} {
		out, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--time", bound, "-o", "json")
		require.Equal(t, 0, code, "--time %s copied from pitr status: %s", bound, errOut)
		var dry struct{ Plan restore.Plan }
		require.NoError(t, json.Unmarshal([]byte(out), &dry))
		assert.Equal(t, bound, pitrtime.Format(dry.Plan.RestoreTime.Truncate(time.Millisecond)))
	}
	e, err := time.Parse(time.RFC3339, earliest)
	require.NoError(t, err)
	before := pitrtime.Format(e.Add(-time.Millisecond))
	_, errOut, code = target.Dynops(t, log, "pitr", "restore", "--table", src, "--time", before)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--time "+before+" is outside the restorable window of "+src+", "+earliest+" .. ")
}

// The drill of runbooks/pitr-restore.md: restore, corrupt the original (the
// emulator restores the current items whatever the time, so the damage comes
// after the restore here), diff, repair, diff again.
func TestRestoreDiffRepairDrill(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "dev")
	dst := src + "-restored"
	fixture.Cleanup(t, db, dst)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	_, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes")
	require.Equal(t, 0, code, errOut)

	// The bad day: 2 items deleted, 3 corrupted, 1 written after the restore point.
	for _, i := range []int{5, 6} {
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &src, Key: fixture.UserKey(i)})
		require.NoError(t, err)
	}
	bad := fixture.Users(13)[10:]
	for _, it := range bad {
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
	}
	fixture.Put(t, db, src, append(bad, fixture.Users(41)[40]))

	keys := filepath.Join(t.TempDir(), "keys.jsonl")
	out, errOut, code := target.Dynops(t, log, "table", "diff", "--source", dst, "--target", src, "--segments", "3", "--keys-out", keys, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var rep tablediff.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, [3]int64{2, 1, 3}, [3]int64{rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})
	assert.Equal(t, 3, rep.Segments)

	_, _, code = target.Dynops(t, log, "table", "diff", "--source", dst, "--target", src, "--exit-code")
	assert.Equal(t, 1, code, "--exit-code: 1 when the tables differ")

	out, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", dst, "--to", src, "--keys", keys)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "copy back 2 missing item(s)")
	assert.Contains(t, out, "copy back 3 changed item(s)")
	assert.Contains(t, out, "keep 1 item(s) only in "+src)
	assert.Contains(t, out, "Dry run: nothing was changed")
	assert.True(t, lastRecord(t, log).DryRun)
	assert.Nil(t, fixture.Get(t, db, src, fixture.UserKey(5)), "a dry run writes nothing")

	out, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", dst, "--to", src, "--keys", keys, "--unscoped", "test: every difference is damage", "--yes", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Result repair.Result `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, int64(5), doc.Result.Copied)
	assert.Equal(t, int64(1), doc.Result.KeptExtra, "never deletes without --delete-extra")
	rec := lastRecord(t, log)
	assert.Equal(t, []string{"protection", "repair-items"}, actions(rec))
	assert.False(t, rec.DryRun)

	out, _, code = target.Dynops(t, log, "table", "diff", "--source", dst, "--target", src, "-o", "json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, [3]int64{0, 1, 0}, [3]int64{rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})

	out, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", dst, "--to", src, "--all-differences", "--delete-extra", "--unconditional", "--unscoped", "test: every difference is damage", "--yes")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "batch writes")
	out, _, code = target.Dynops(t, log, "table", "diff", "--source", dst, "--target", src, "--exit-code")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "The tables hold the same items.")

	t.Run("a keys file of other tables is refused", func(t *testing.T) {
		_, errOut, code := target.Dynops(t, log, "pitr", "repair", "--from", src, "--to", dst, "--keys", keys)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "is not a restore of", "the original is not a restore of its restore")
		_, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", src, "--to", dst, "--keys", keys, "--allow-unrelated-source", "test: keys file check")
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "is a diff of --source "+dst+" --target "+src)
		_, errOut, code = target.Dynops(t, log, "pitr", "repair", "--from", dst, "--to", src, "--keys", keys+".missing")
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "bad keys file: opening keys file")
	})
}

// TestRestoreResumesAHalfDoneRestore: a restore whose run died after
// RestoreTableToPointInTime landed (nothing re-applied) is refused without
// --resume, naming --resume; with it the run takes the table over, audits
// the takeover (resume-restore) and the settings it applies, and prints
// them as read back.
func TestRestoreResumesAHalfDoneRestore(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := source(t, db, "dev")
	dst := src + "-restored-drill"
	fixture.Cleanup(t, db, dst)
	_, err := db.RestoreTableToPointInTime(ctx, &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: &src, TargetTableName: &dst, UseLatestRestorableTime: aws.Bool(true)})
	require.NoError(t, err)
	log := filepath.Join(t.TempDir(), "audit.jsonl")

	_, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, dst+" is a restore of ")
	assert.Contains(t, errOut, "re-run with --resume")

	out, errOut, code := target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--resume", "--yes")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Resumed the restore of "+src+" to "+dst)
	assert.Contains(t, out, "PITR on (35 days), deletion protection on, TTL ttl")
	rec := lastRecord(t, log)
	assert.Contains(t, actions(rec), "resume-restore")
	assert.NotContains(t, actions(rec), "restore-table", "nothing was restored by this run")
	last := rec.Actions[len(rec.Actions)-1]
	assert.Equal(t, "apply-setting", last.What)
	assert.Contains(t, fmt.Sprint(last.Detail), restore.TagRestoredFrom+"=", "the marker, last")
	got, err := tablesettings.Capture(ctx, db, dst)
	require.NoError(t, err)
	assert.Equal(t, src, got.Tags[restore.TagRestoredFrom])

	out, errOut, code = target.Dynops(t, log, "pitr", "restore", "--table", src, "--latest", "--target", dst, "--resume", "--yes")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, dst+" is already a finished restore of "+src)
}
