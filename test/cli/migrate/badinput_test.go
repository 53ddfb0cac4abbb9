package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/fixture"
)

// destinationCounts reads back how many items each destination holds.
func destinationCounts(t *testing.T, db *dynamodb.Client) map[string]int {
	t.Helper()
	out := map[string]int{}
	for usage := range destinations(t) {
		name := "dev-" + product + "-" + usage
		if _, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name}); err != nil {
			continue
		}
		out[name] = len(scanAll(t, db, name))
	}
	return out
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "routes.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// Bad input is refused with a clear error and nothing written: no state
// file, every destination still empty (read back).
func TestBadInputRefused(t *testing.T) {
	exampleRoutes, err := os.ReadFile(routesFile())
	require.NoError(t, err)
	cases := []struct {
		name    string
		prepare func(t *testing.T, d *domain) (routes string)
		noDest  bool // do not create the destinations
		noItems bool // an empty source without a stream
		cmd     []string
		code    int
		want    []string
	}{
		{name: "unknown field in routes", cmd: []string{"backfill"}, code: 2, want: []string{"routes.yaml", "line 4", "tabel", "not a rule field"},
			prepare: func(t *testing.T, d *domain) string {
				return writeFile(t, "version: 1\nroutes:\n  - table: dev-aiagent-users\n    tabel: x\n    match: {PK: \"TENANT#*\"}\n")
			}},
		{name: "shadowed rule", cmd: []string{"plan"}, code: 2, want: []string{"routes[1].match", "never match", "line 3"},
			prepare: func(t *testing.T, d *domain) string {
				return writeFile(t, "version: 1\nroutes:\n  - table: dev-aiagent-users\n    match: {PK: \"TENANT#*\"}\n  - table: dev-aiagent-tasks\n    match: {PK: \"TENANT#*\", SK: \"TASK#*\"}\n")
			}},
		{name: "missing routes file", cmd: []string{"backfill"}, code: 2, want: []string{"--routes", "no such file"},
			prepare: func(t *testing.T, d *domain) string { return filepath.Join(t.TempDir(), "absent.yaml") }},
		{name: "missing destinations", noDest: true, cmd: []string{"backfill", "--allow-unmatched"}, code: 2,
			want: []string{"nothing was written", "dev-aiagent-users does not exist", "dev-aiagent-notices does not exist"}},
		{name: "wrong key schema", cmd: []string{"backfill", "--allow-unmatched"}, code: 2, want: []string{"dev-aiagent-wrongkey is keyed id(S) HASH", "PK(S) HASH, SK(S) RANGE"},
			prepare: func(t *testing.T, d *domain) string {
				fixture.Create(t, d.db, fixture.Table{Name: "dev-aiagent-wrongkey", HashKey: "id"})
				return writeFile(t, strings.Replace(string(exampleRoutes), "table: dev-aiagent-notices", "table: dev-aiagent-wrongkey", 1))
			}},
		{name: "destination not empty", cmd: []string{"backfill", "--allow-unmatched"}, code: 2, want: []string{"dev-aiagent-tasks is not empty"},
			prepare: func(t *testing.T, d *domain) string {
				fixture.Put(t, d.db, "dev-aiagent-tasks", []map[string]types.AttributeValue{{"PK": s("TENANT#x"), "SK": s("TASK#already")}})
				return routesFile()
			}},
		{name: "source key differs from routes", cmd: []string{"backfill", "--allow-unmatched"}, code: 2, want: []string{"source_key [pk sk]", "fix source_key"},
			prepare: func(t *testing.T, d *domain) string {
				return writeFile(t, "version: 1\nsource_key: [pk, sk]\nroutes:\n  - table: dev-aiagent-users\n    match: {pk: \"TENANT#*\"}\n")
			}},
		{name: "source without stream", noItems: true, cmd: []string{"backfill"}, code: 2, want: []string{"has no stream", "NEW_AND_OLD_IMAGES"}},
		{name: "catch-up before backfill", cmd: []string{"catch-up"}, code: 1, want: []string{"no migration of dev-aiagent-single found", "backfill"}},
		{name: "cutover before backfill", cmd: []string{"cutover", "--yes"}, code: 1, want: []string{"no migration of dev-aiagent-single found"}},
		{name: "DDB-PROT-01 protected destination without its typed name", cmd: []string{"backfill", "--allow-unmatched"}, code: 2,
			want: []string{"dev-aiagent-tasks", "--confirm"},
			prepare: func(t *testing.T, d *domain) string {
				tagTable(t, d.db, "dev-aiagent-tasks", "env", "prod")
				return routesFile()
			}},
		{name: "missing source flag", cmd: []string{"plan", "--source", ""}, code: 2, want: []string{"needs --source TABLE and --routes FILE"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := setup(t, !c.noDest)
			if !c.noItems {
				d.populate(t, 120)
			}
			routes := routesFile()
			if c.prepare != nil {
				routes = c.prepare(t, d)
			}
			before := destinationCounts(t, d.db)
			dir := t.TempDir()
			state := filepath.Join(dir, "state.json")
			args := append([]string{"migrate"}, c.cmd[0], "--source", source, "--routes", routes, "--state", state)
			args = append(args, c.cmd[1:]...)
			_, errOut, code := target.Dynops(t, filepath.Join(dir, "audit.jsonl"), args...)
			assert.Equal(t, c.code, code)
			for _, w := range c.want {
				assert.Contains(t, errOut, w)
			}
			_, err := os.Stat(state)
			assert.True(t, os.IsNotExist(err), "no state file is written")
			assert.Equal(t, before, destinationCounts(t, d.db), "nothing written to the destinations")
		})
	}
}

// migrateSmall runs plan-free backfill and catch-up of n items and returns the state path.
func migrateSmall(t *testing.T, d *domain, n int) (state, auditLog string) {
	t.Helper()
	d.populate(t, n)
	dir := t.TempDir()
	state, auditLog = filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	out, _, code := target.Dynops(t, auditLog, "migrate", "backfill", "--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched")
	require.Equal(t, 0, code, out)
	return state, auditLog
}

// A position the stream no longer holds (a shard trimmed, or older than the
// retention without a checkpoint) is refused, asking for a new backfill.
func TestCatchUpTrimmedPosition(t *testing.T) {
	d := setup(t, true)
	state, auditLog := migrateSmall(t, d, 120)
	edits := map[string]func(st *migrate.State){
		"shard gone":     func(st *migrate.State) { st.Position.Shards = []string{"shardId-00000000000000000000-gone"} },
		"past retention": func(st *migrate.State) { st.Position.Time = time.Now().Add(-25 * time.Hour) },
	}
	orig, err := os.ReadFile(state)
	require.NoError(t, err)
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(state, orig, 0o600))
			st, err := migrate.LoadState(state)
			require.NoError(t, err)
			edit(st)
			require.NoError(t, st.Save())
			_, errOut, code := target.Dynops(t, auditLog, "migrate", "catch-up", "--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched")
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, "stream position trimmed")
			assert.Contains(t, errOut, "24 hours")
			assert.Contains(t, errOut, "backfill --restart")
		})
	}
}

// Verify finds every kind of difference: an item missing from its
// destination, a changed one, an extra one and one in the wrong table.
func TestVerifyFindsDifferences(t *testing.T) {
	ctx := context.Background()
	d := setup(t, true)
	state, auditLog := migrateSmall(t, d, 240)
	verify := func() (migrate.VerifyResult, int) {
		out, _, code := target.Dynops(t, auditLog, "migrate", "verify", "--source", source, "--routes", routesFile(), "--state", state, "-o", "json")
		var v migrate.VerifyResult
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		return v, code
	}
	v, code := verify()
	require.Equal(t, 0, code)
	require.Zero(t, v.Differences())

	tasks := scanAll(t, d.db, "dev-aiagent-tasks")
	require.GreaterOrEqual(t, len(tasks), 2)
	_, err := d.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("dev-aiagent-tasks"), Key: map[string]types.AttributeValue{"PK": tasks[0]["PK"], "SK": tasks[0]["SK"]}})
	require.NoError(t, err)
	tasks[1]["status"] = s("tampered")
	_, err = d.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("dev-aiagent-tasks"), Item: tasks[1]})
	require.NoError(t, err)
	fixture.Put(t, d.db, "dev-aiagent-notices", []map[string]types.AttributeValue{{"PK": s("GLOBAL"), "SK": s("NOTICE#extra")}})
	users := scanAll(t, d.db, "dev-aiagent-users")
	fixture.Put(t, d.db, "dev-aiagent-tenants", users[:1]) // a copy in the wrong table

	v, code = verify()
	assert.Equal(t, 1, code)
	assert.EqualValues(t, 1, v.OnlyInSource)
	assert.EqualValues(t, 1, v.Changed)
	assert.EqualValues(t, 2, v.OnlyInTarget)
	require.Len(t, v.Sample.OnlyInTarget, 2)
	assert.Contains(t, string(v.Sample.OnlyInTarget[0])+string(v.Sample.OnlyInTarget[1]), "dev-aiagent-tenants")

	// A cutover finds the same differences and stops before the pointer:
	// a failure exit, the step table and the way out, the pointer unchanged.
	sc := ssm.NewFromConfig(target.AWSConfig(t))
	before := pointerOrNone(t, sc)
	out, errOut, code := target.Dynops(t, auditLog, "migrate", "cutover", "--source", source, "--routes", routesFile(), "--state", state,
		"--yes", "--settle", "500ms", "--allow-unmatched")
	assert.Equal(t, 1, code, out+errOut)
	assert.Contains(t, errOut, "cutover stopped at verify: 4 difference(s)")
	assert.Contains(t, errOut, "dynops migrate rollback")
	assert.Regexp(t, `verify +failed`, out)
	assert.NotContains(t, out, "Cut over:")
	assert.Equal(t, before, pointerOrNone(t, sc), "the pointer is unchanged (read back)")

	// The way out it names: the rollback takes the fence off (read back).
	arn := tableARN(t, d.db, source)
	doc, _, err := failover.ResourcePolicy(ctx, d.db, arn)
	require.NoError(t, err)
	require.True(t, failover.HasFence(doc), "the failed cutover left the source fenced")
	out, errOut, code = target.Dynops(t, auditLog, "migrate", "rollback", "--source", source, "--routes", routesFile(), "--state", state, "--yes")
	require.Equal(t, 0, code, out+errOut)
	doc, _, err = failover.ResourcePolicy(ctx, d.db, arn)
	require.NoError(t, err)
	assert.False(t, failover.HasFence(doc), "the rollback unfenced the source")
}

// pointerOrNone reads the application's pointer, "" when it does not exist.
func pointerOrNone(t *testing.T, c *ssm.Client) string {
	t.Helper()
	out, err := c.GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String(migrate.DefaultPointer(source))})
	var nf *ssmtypes.ParameterNotFound
	if errors.As(err, &nf) {
		return ""
	}
	require.NoError(t, err)
	return aws.ToString(out.Parameter.Value)
}

func tagTable(t *testing.T, db *dynamodb.Client, table, key, value string) {
	t.Helper()
	dt, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	require.NoError(t, err)
	_, err = db.TagResource(context.Background(), &dynamodb.TagResourceInput{ResourceArn: dt.Table.TableArn,
		Tags: []types.Tag{{Key: &key, Value: &value}}})
	require.NoError(t, err)
}

// TestProtectedDestinationWithItsTypedName_DDB_PROT_01: a destination the
// protection rule protects is written once its name is typed (--confirm),
// and the run's started record, written before the first write, names it.
func TestProtectedDestinationWithItsTypedName_DDB_PROT_01(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 40)
	tagTable(t, d.db, "dev-aiagent-tasks", "env", "prod")
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, "migrate", "backfill", "--source", source, "--routes", routesFile(),
		"--state", filepath.Join(dir, "state.json"), "--allow-unmatched", "--confirm", "dev-aiagent-tasks")
	require.Equal(t, 0, code, out+errOut)
	recs, err := audit.Read(log)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	assert.Equal(t, audit.EventStarted, recs[0].Event)
	assert.False(t, recs[0].Late, "the started record comes before the writes")
	assert.Contains(t, recs[0].Plan.Targets, "dev-aiagent-tasks")

	// The catch-up writes the same destinations: the same rule.
	_, errOut, code = target.Dynops(t, log, "migrate", "catch-up", "--source", source, "--routes", routesFile(),
		"--state", filepath.Join(dir, "state.json"), "--allow-unmatched")
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "dev-aiagent-tasks")
	_, errOut, code = target.Dynops(t, log, "migrate", "catch-up", "--source", source, "--routes", routesFile(),
		"--state", filepath.Join(dir, "state.json"), "--allow-unmatched", "--confirm", "dev-aiagent-tasks")
	require.Equal(t, 0, code, errOut)
}
