package runbook

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/harness"
)

var planHash = regexp.MustCompile(`--plan-sha256 ([0-9a-f]{64})`)

// approvalRun is pitr-restore on a prod table through its restore step
// (destructive, protected) with one second approver required, run by key's
// user; point is the restore point. It returns the run's stderr and exit.
type approvalRun struct {
	t                       *testing.T
	table, bucket, incident string
	log                     string
	db                      *dynamodb.Client
}

func newApprovalRun(t *testing.T) *approvalRun {
	db, table := prodTable(t)
	bucket, _ := stateBucket(t)
	return &approvalRun{t: t, db: db, table: table, bucket: bucket, incident: "INC-" + harness.UniqueID(), log: filepath.Join(t.TempDir(), "audit.jsonl")}
}

func (r *approvalRun) run(key accessKey, point string, extra ...string) (string, int) {
	args := append([]string{"runbook", "run", "pitr-restore", "--incident", r.incident, "--param", "table=" + r.table,
		"--param", "restore_point=" + point, "--yes", "--confirm", r.table, "--through", "restore",
		"--state-bucket", r.bucket, "--approvals", "1"}, extra...)
	_, errOut, code := runAs(r.t, &key, r.log, args...)
	return errOut, code
}

func (r *approvalRun) approve(key accessKey, hash string) (string, int) {
	_, errOut, code := runAs(r.t, &key, r.log, "runbook", "approve", "--incident", r.incident, "--step", "restore",
		"--plan-sha256", hash, "--state-bucket", r.bucket)
	return errOut, code
}

func hashOf(t *testing.T, errOut string) string {
	t.Helper()
	m := planHash.FindStringSubmatch(errOut)
	require.NotNil(t, m, "the run prints the plan's hash:\n%s", errOut)
	return m[1]
}

// restorePoint is --latest: on the emulator the latest restorable time of
// a new table stays its creation time, so the restore step's plan is the
// same on every run (on AWS it moves: a --latest plan changes, see
// docs/oncall-team.md).
func restorePoint() string { return "--latest" }

// earliest is a --time at the table's earliest restorable time (another
// restore point than --latest: another plan).
func (r *approvalRun) earliest() string {
	out, err := r.db.DescribeContinuousBackups(context.Background(), &dynamodb.DescribeContinuousBackupsInput{TableName: &r.table})
	require.NoError(r.t, err)
	return "--time " + out.ContinuousBackupsDescription.PointInTimeRecoveryDescription.EarliestRestorableDateTime.UTC().Format(time.RFC3339Nano)
}

// TestRunbookSecondApprover: the run stops before the protected restore
// with its plan and hash (exit 5, nothing restored); the caller who runs it
// cannot approve it (exit 2, naming them), nor can anyone approve another
// hash; another IAM user can; the run then restores, and the approval is
// in the audit and used once.
func TestRunbookSecondApprover(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	r := newApprovalRun(t)
	point := restorePoint()

	errOut, code := r.run(bob, point)
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "needs 1 approval(s) by another caller")
	assert.Contains(t, errOut, "dynops pitr restore --table "+r.table, "the plan shows the command line")
	hash := hashOf(t, errOut)
	assert.Equal(t, 0, realRuns(t, r.log, "restore"), "the restore did not run for real")

	errOut, code = r.approve(bob, hash)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "you ("+bob.ARN+") run it")

	errOut, code = r.approve(alice, "0000000000000000000000000000000000000000000000000000000000000000")
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "is not the plan waiting ("+hash+")")

	errOut, code = r.approve(alice, hash)
	require.Equal(t, 0, code, errOut)

	errOut, code = r.run(bob, point)
	require.Equal(t, exitcode.Stopped, code, errOut) // --through restore
	assert.Contains(t, errOut, "approved by "+alice.ARN)
	assert.Contains(t, errOut, "Stopped after step")
	assert.Equal(t, 1, realRuns(t, r.log, "restore"), "the restore ran once, for real")
	assert.Equal(t, 1, countActs(t, r.log, audit.ActRunbookApprove), "the approval is audited")
	assert.Equal(t, 1, countActs(t, r.log, audit.ActRunbookApprovalUsed), "its use is audited")
}

// TestRunbookPlanChangedNeedsNewApproval: an approval is bound to the plan's
// hash: after the restore point changes, the approved plan does not run and
// a new request (a new hash) waits.
func TestRunbookPlanChangedNeedsNewApproval(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	r := newApprovalRun(t)
	point := restorePoint()
	errOut, code := r.run(bob, point)
	require.Equal(t, exitcode.Stopped, code, errOut)
	first := hashOf(t, errOut)
	errOut, code = r.approve(alice, first)
	require.Equal(t, 0, code, errOut)

	errOut, code = r.run(bob, r.earliest())
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "the plan changed since approval was asked")
	second := hashOf(t, errOut)
	assert.NotEqual(t, first, second)
	assert.NotContains(t, errOut, "approved by")
	assert.Equal(t, 0, countActs(t, r.log, audit.ActRunbookApprovalUsed), "the old approval was not used")
	errOut, code = r.approve(alice, first)
	require.Equal(t, 2, code, "the old hash is no longer approvable:\n%s", errOut)
}

// TestRunbookApprovalTimesOut: a request nobody approved in time stops the
// run cleanly (exit 5, nothing restored, audited); an approval after it is
// refused.
func TestRunbookApprovalTimesOut(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	r := newApprovalRun(t)
	point := restorePoint()
	errOut, code := r.run(bob, point, "--approval-timeout", "1s")
	require.Equal(t, exitcode.Stopped, code, errOut)
	hash := hashOf(t, errOut)
	time.Sleep(1500 * time.Millisecond)
	errOut, code = r.approve(alice, hash)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "timed out")
	errOut, code = r.run(bob, point)
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "approval request timed out")
	assert.Equal(t, 1, countActs(t, r.log, audit.ActRunbookApprovalTimedOut))
	assert.Equal(t, 0, countActs(t, r.log, audit.ActRunbookApprovalUsed))
	assert.Equal(t, 0, realRuns(t, r.log, "restore"), "nothing was restored")
}

// realRuns counts the runs of a runbook step (inside the runbook run) that
// were not dry runs.
func realRuns(t *testing.T, log, step string) int {
	t.Helper()
	n := 0
	for _, r := range runs(t, log) {
		if r.Step == step && !r.DryRun && r.ParentRun != "" { // a step of the runbook run, not `runbook approve`
			n++
		}
	}
	return n
}

// countActs counts the audit actions named what.
func countActs(t *testing.T, log, what string) int {
	t.Helper()
	n := 0
	for _, r := range runs(t, log) {
		for _, a := range r.Actions {
			if a.What == what {
				n++
			}
		}
	}
	return n
}

// TestRunbookRejected: a rejection (by another caller, with a reason) stops
// the run at the step (exit 5, nothing restored); both are audited, and the
// next run asks for a new approval.
func TestRunbookRejected(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	r := newApprovalRun(t)
	errOut, code := r.run(bob, restorePoint())
	require.Equal(t, exitcode.Stopped, code, errOut)
	_, errOut, code = runAs(t, &alice, r.log, "runbook", "reject", "--incident", r.incident, "--step", "restore",
		"--reason", "wrong restore point", "--state-bucket", r.bucket)
	require.Equal(t, 0, code, errOut)
	errOut, code = r.run(bob, restorePoint())
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, alice.ARN+" rejected its plan (wrong restore point)")
	assert.Equal(t, 1, countActs(t, r.log, audit.ActRunbookReject))
	assert.Equal(t, 1, countActs(t, r.log, audit.ActRunbookApprovalRejected))
	assert.Equal(t, 0, realRuns(t, r.log, "restore"), "nothing was restored")
	errOut, code = r.run(bob, restorePoint())
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "needs 1 approval(s) by another caller", "a new request")
}
