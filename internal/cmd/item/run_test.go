package item_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// target is the emulator this package's tests start (DYNOPS_TEST_TARGET=aws: real AWS).
var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// run is dynops in-process (cmdtest.Run) against the target.
func run(t *testing.T, auditLog string, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: target.Endpoint(), Region: target.Region, AuditLog: auditLog}, args...)
}

// userTable is a table named prefix-<id>-user holding fixture.Users(3).
func userTable(t *testing.T, db *dynamodb.Client, prefix string) string {
	t.Helper()
	name := prefix + "-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
	fixture.Put(t, db, name, fixture.Users(3))
	return name
}

func status(t *testing.T, db *dynamodb.Client, table string, i int) string {
	t.Helper()
	it := fixture.Get(t, db, table, fixture.UserKey(i))
	require.NotNil(t, it, "user %d of %s", i, table)
	return it["status"].(*types.AttributeValueMemberS).Value
}

// TestItemUpdateWritesWithYesOnly: without --yes an update is a dry run
// that changes nothing; with --yes the item is changed as asked (read back
// from the service) and the run is audited as done.
func TestItemUpdateWritesWithYesOnly(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := userTable(t, db, "dev")
	log := t.TempDir() + "/audit.jsonl"
	args := []string{"item", "update", "--table", table, "--key", `{"user_id": "user_00001"}`, "--set", `{"status": "fixed"}`, "--reason", "INC-42"}

	r := run(t, log, args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "DRY RUN: with --yes dynops would")
	assert.Equal(t, "active", status(t, db, table, 1), "a dry run changes nothing")

	r = run(t, log, append(args, "--yes")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "fixed", status(t, db, table, 1), "the item is updated")
	assert.Equal(t, "active", status(t, db, table, 0), "and no other")
	recs, err := audit.Read(log)
	require.NoError(t, err)
	last := recs[len(recs)-1]
	assert.Equal(t, audit.EventFinished, last.Event)
	assert.Equal(t, audit.ResultOK, last.Result)
	assert.False(t, last.DryRun)
	assert.Equal(t, "dynops item update", last.Command)
}

// TestItemDeleteOnAProtectedTableRefused: a delete on a protected (prod-)
// table without --reason and its typed name is refused with exit 2, naming
// both, and the item stays.
func TestItemDeleteOnAProtectedTableRefused(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := userTable(t, db, "prod")
	r := run(t, "", "item", "delete", "--table", table, "--key", `{"user_id": "user_00002"}`, "--yes")
	assert.Equal(t, 2, r.Code)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, `--reason "why"`)
	assert.Contains(t, r.Stderr, "--confirm "+table)
	assert.Equal(t, "active", status(t, db, table, 2), "the item is still there")

	r = run(t, "", "item", "delete", "--table", table, "--key", `{"user_id": "user_00002"}`, "--yes", "--reason", "INC-42", "--confirm", "prod-other-user")
	assert.Equal(t, 2, r.Code, "the wrong name typed")
	assert.Contains(t, r.Stderr, "--confirm")
	assert.Equal(t, "active", status(t, db, table, 2), "the item is still there")
}
