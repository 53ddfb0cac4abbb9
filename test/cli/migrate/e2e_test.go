package migrate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/harness"
)

// itemsFromEnv is the source size: 10,000 by default (the figure, about
// a minute on the emulator); DYNOPS_MIGRATE_ITEMS sets another (make test-migrate-big).
func itemsFromEnv(t *testing.T) int {
	if v := os.Getenv("DYNOPS_MIGRATE_ITEMS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "DYNOPS_MIGRATE_ITEMS")
		return n
	}
	return 10_000
}

func readState(t *testing.T, path string) *migrate.State {
	t.Helper()
	st, err := migrate.LoadState(path)
	require.NoError(t, err)
	return st
}

// TestMigrateEndToEnd is the "done when": a source of every domain
// plus junk, a concurrent writer (puts, updates, route-changing moves,
// deletes) through the backfill and the catch-up, the backfill SIGKILLed and
// resumed, verify with 0 differences, cutover with the fence, rollback.
func TestMigrateEndToEnd_DDB_API_02(t *testing.T) {
	ctx := context.Background()
	n := itemsFromEnv(t)
	d := setup(t, true)
	start := time.Now()
	d.populate(t, n)
	t.Logf("source: %d items in %s", n, time.Since(start))
	dir := t.TempDir()
	state, auditLog := filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	// The emulator is one Python process: verify reads the source and twelve
	// destinations at once (four segments each), and under CI's load one of
	// those Scans waited past the default 30 s per call. A longer per-call
	// bound keeps the test about the migration, not about moto's queue.
	common := []string{"--source", source, "--routes", routesFile(), "--state", state, "--timeout", "3m"}
	run := func(args ...string) (string, int) {
		t0 := time.Now()
		out, _, code := target.Dynops(t, auditLog, append(args, common...)...)
		t.Logf("TIMING %v: %s", args, time.Since(t0))
		return out, code
	}

	// Plan: the junk fails it, --allow-unmatched makes it a warning.
	out, code := run("migrate", "plan", "--sample", "1000")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "(unmatched)")
	assert.Contains(t, out, "LEGACY#")
	out, code = run("migrate", "plan", "--allow-unmatched", "-o", "json")
	require.Equal(t, 0, code, out)
	var plan migrate.PlanResult
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	assert.EqualValues(t, n, plan.Scanned)
	assert.EqualValues(t, n/100, plan.Unmatched)
	require.Len(t, plan.Tables, 12)
	for _, tc := range plan.Tables {
		assert.Greater(t, tc.Items, int64(n/20), tc.Table)
	}
	require.Len(t, plan.Destinations, 12)
	for _, dc := range plan.Destinations {
		assert.True(t, dc.Exists && dc.KeyOK, dc.Table)
		require.NotNil(t, dc.Empty, dc.Table)
		assert.True(t, *dc.Empty, dc.Table)
		assert.Empty(t, dc.Problems, dc.Table)
	}
	assert.Equal(t, "NEW_AND_OLD_IMAGES", plan.Source.Stream)

	w := d.startWriter(t, n, 20)
	defer w.halt()

	// Backfill in the real binary, killed with SIGKILL part way.
	args := append([]string{"migrate", "backfill", "--allow-unmatched", "--max-writes-per-second", "1500", "--segments", "4"}, common...)
	cmd := target.Command(t, args, harness.AuditLog(auditLog))
	cmd.Start()
	deadline := time.Now().Add(60 * time.Second)
	var read int64
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		st, err := migrate.LoadState(state)
		if err != nil || st.Backfill == nil {
			continue
		}
		read = 0
		for _, sg := range st.Backfill.Segments {
			read += sg.Read
		}
		if read >= int64(n/4) {
			break
		}
	}
	t.Logf("TIMING backfill subprocess until kill: %s", time.Since(start))
	require.NoError(t, cmd.Signal(syscall.SIGKILL))
	cmd.Wait()
	st := readState(t, state)
	require.NotNil(t, st.Position, "the stream position is recorded before the first read")
	require.False(t, st.BackfillDone(), "killed part way (%d items read)", read)
	t.Logf("killed after %d of %d items; writer: %s", read, n, w)

	// Resume: the segments continue from their checkpoints.
	out, code = run("migrate", "backfill", "--allow-unmatched")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "Resumed")
	st = readState(t, state)
	require.True(t, st.BackfillDone())
	// A second run is idempotent: nothing to do.
	out, code = run("migrate", "backfill", "--allow-unmatched")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "finished already")

	// Catch-up while the writer goes on, then once more after it stops.
	out, code = run("migrate", "catch-up", "--allow-unmatched")
	require.Equal(t, 0, code, out)
	time.Sleep(time.Second)
	w.halt()
	t.Logf("writer: %s", w)
	require.Greater(t, w.moves.Load(), int64(0))
	require.Greater(t, w.deletes.Load(), int64(0))
	time.Sleep(time.Second)
	out, code = run("migrate", "catch-up", "--allow-unmatched", "-o", "json")
	require.Equal(t, 0, code, out)
	var pass migrate.PassResult
	require.NoError(t, json.Unmarshal([]byte(out), &pass))
	assert.True(t, pass.CaughtUp)

	out, code = run("migrate", "verify")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "0 differences")

	// Spot checks read back from the destinations: renamed index attributes,
	// no generic ones, no moved task left in tasks.
	users := scanAll(t, d.db, "dev-aiagent-users")
	require.NotEmpty(t, users)
	for _, u := range users {
		assert.Contains(t, u, "user_list_key")
		assert.NotContains(t, u, "GSI1PK")
	}
	for _, m := range scanAll(t, d.db, "dev-aiagent-email-messages") {
		assert.NotContains(t, m, "GSI2PK")
	}
	moved := 0
	for _, m := range scanAll(t, d.db, "dev-aiagent-email-messages") {
		if sk := m["SK"].(*types.AttributeValueMemberS).Value; len(sk) > 19 && sk[:19] == "EMAIL_MESSAGE#from-" {
			moved++
			orig := sk[19:]
			got, err := d.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("dev-aiagent-tasks"), Key: map[string]types.AttributeValue{"PK": m["PK"], "SK": s(orig)}})
			require.NoError(t, err)
			assert.Nil(t, got.Item, "the moved task %s left its old destination", orig)
		}
	}
	assert.Positive(t, moved)

	// Cutover: dry run first, then the fence, drain, verify, pointer.
	out, code = run("migrate", "cutover")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "Dry run")
	arn := tableARN(t, d.db, source)
	doc, _, err := failover.ResourcePolicy(ctx, d.db, arn)
	require.NoError(t, err)
	assert.False(t, failover.HasFence(doc), "a dry run does not fence")

	out, code = run("migrate", "cutover", "--yes", "--settle", "500ms", "--allow-unmatched")
	require.Equal(t, 0, code, out)
	doc, _, err = failover.ResourcePolicy(ctx, d.db, arn)
	require.NoError(t, err)
	assert.True(t, failover.HasFence(doc), "the source is fenced (read back)")
	sc := ssm.NewFromConfig(target.AWSConfig(t))
	assert.Equal(t, "multi", pointer(t, sc))

	// Rollback: the fence goes, the pointer goes back.
	out, code = run("migrate", "rollback", "--yes")
	require.Equal(t, 0, code, out)
	doc, _, err = failover.ResourcePolicy(ctx, d.db, arn)
	require.NoError(t, err)
	assert.False(t, failover.HasFence(doc))
	assert.Equal(t, "single", pointer(t, sc))

	// Every change is in the audit log.
	recs, err := audit.Read(auditLog)
	require.NoError(t, err)
	var whats []string
	for _, r := range recs {
		for _, a := range r.Actions {
			whats = append(whats, a.What)
		}
	}
	// (The killed run's record is lost with it; the resumed run names the position it continues.)
	for _, want := range []string{"resume-backfill", "backfill-items", "apply-stream-changes", "fence-writes", "drain-stream", "flip-pointer", "unfence-writes"} {
		assert.Contains(t, whats, want)
	}
	t.Logf("end to end with %d items: %s", n, time.Since(start))
}

func scanAll(t *testing.T, db *dynamodb.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: aws.String(table)}
	for {
		page, err := db.Scan(context.Background(), in)
		require.NoError(t, err)
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func tableARN(t *testing.T, db *dynamodb.Client, name string) string {
	t.Helper()
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	return aws.ToString(out.Table.TableArn)
}

func pointer(t *testing.T, c *ssm.Client) string {
	t.Helper()
	out, err := c.GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String(migrate.DefaultPointer(source))})
	require.NoError(t, err)
	return aws.ToString(out.Parameter.Value)
}
