// Package runbook tests the executable runbooks and the audit trail on the
// target (the emulator by default): every runbook runs end to end through
// `dynops runbook run --yes --confirm`, one is killed with SIGKILL in the
// middle of a destructive step and resumed, and the incident timeline is
// read back.
package runbook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// command is the built binary running args against the target (the
// emulator's endpoint) with DYNOPS_INCIDENT unset (a shell's own would
// join the run to another incident).
func command(t *testing.T, auditLog string, args ...string) *harness.Proc {
	t.Helper()
	return commandWith(t, auditLog, args)
}

// commandWith is command with more of harness.Command's options
// (another principal's credentials, another endpoint).
func commandWith(t *testing.T, auditLog string, args []string, opts ...harness.CommandOption) *harness.Proc {
	t.Helper()
	return target.Command(t, args, append([]harness.CommandOption{harness.AuditLog(auditLog), harness.Env("DYNOPS_INCIDENT=")}, opts...)...)
}

// slowCommand is command with every DynamoDB BatchWriteItem delayed by
// 100 ms on the emulator (a reverse proxy in front of it), so that a test
// that kills the command after its first write sees it mid-way however
// loaded the machine is. Real AWS is slow enough as it is.
func slowCommand(t *testing.T, auditLog string, args ...string) *harness.Proc {
	t.Helper()
	if target.Emulator == nil {
		return command(t, auditLog, args...)
	}
	u, err := url.Parse(target.Emulator.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".BatchWriteItem") {
			time.Sleep(100 * time.Millisecond)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return commandAt(t, auditLog, srv.URL, args...)
}

// commandAt is command through endpoint ("": no --endpoint-url).
func commandAt(t *testing.T, auditLog, endpoint string, args ...string) *harness.Proc {
	t.Helper()
	return commandWith(t, auditLog, args, harness.Via(endpoint))
}

// runbookRun is the last `runbook run` record (not a step's) of the incident.
func runbookRun(t *testing.T, auditLog, incident string) audit.Run {
	t.Helper()
	var last *audit.Run
	for _, r := range runs(t, auditLog) {
		if r.Incident == incident && r.Runbook != "" && r.Step == "" {
			last = &r
		}
	}
	require.NotNil(t, last, "no runbook run record of incident %s", incident)
	return *last
}

// prodTable is a prod-named, env=prod-tagged table with PITR and 3 items;
// the tables restored from it are dropped when the test ends.
func prodTable(t *testing.T) (*dynamodb.Client, string) {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "prod-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true, Tags: map[string]string{"env": "prod"}})
	fixture.Put(t, db, table, fixture.Users(3))
	dropRestoredWhenDone(t, db, table)
	return db, table
}

// restoredTables are the tables restored from table (named
// <table>-restored-<time> by the pitr-restore runbook).
func restoredTables(t *testing.T, db *dynamodb.Client, table string) []string {
	t.Helper()
	var out []string
	for _, n := range fixture.TableNames(t, db) {
		if strings.HasPrefix(n, table+"-restored-") {
			out = append(out, n)
		}
	}
	return out
}

// dropRestoredWhenDone drops the tables restored from table when the test ends.
func dropRestoredWhenDone(t *testing.T, db *dynamodb.Client, table string) {
	t.Cleanup(func() {
		for _, n := range restoredTables(t, db, table) {
			dropTable(db, n)
		}
	})
}

// runs reads the audit log back as runs.
func runs(t *testing.T, auditLog string) []audit.Run {
	t.Helper()
	recs, err := audit.Read(auditLog)
	require.NoError(t, err)
	return audit.Runs(recs)
}

// auditLogJSON is `dynops audit log -o json` (what on-call reads).
func auditLogJSON(t *testing.T, auditLog string, extra ...string) []audit.Run {
	t.Helper()
	out, _, code := target.Dynops(t, auditLog, append([]string{"audit", "log", "-o", "json"}, extra...)...)
	require.Equal(t, 0, code)
	var rs []audit.Run
	require.NoError(t, json.Unmarshal([]byte(out), &rs))
	return rs
}

// dropTable deletes a table that may have deletion protection on (the
// guideline's two-step delete).
func dropTable(db *dynamodb.Client, name string) {
	ctx := context.Background()
	_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name, DeletionProtectionEnabled: aws.Bool(false)})
	_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
}

// stepsSection returns the "Runbook steps" lines of a markdown timeline.
func stepsSection(md string) []string {
	_, after, ok := strings.Cut(md, "## Runbook steps\n")
	if !ok {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		if strings.HasPrefix(l, "- ") {
			lines = append(lines, l)
		} else if strings.TrimSpace(l) != "" {
			break
		}
	}
	return lines
}
