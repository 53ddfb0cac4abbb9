package audit

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestProtectedWriteNeedsTheCentralCopy (issue 44): with no central audit
// copy set (no --audit-log-group, no DYNOPS_AUDIT_LOG_GROUP), a write to a
// protected table is refused (exit 2, naming how to set one, nothing
// written, read back); --without-audit-log-group REASON is the break-glass
// role's alone. The same write with the group set goes ahead; an unprotected
// table needs no central copy; a dry run is not refused.
func TestProtectedWriteNeedsTheCentralCopy(t *testing.T) {
	t.Setenv("DYNOPS_AUDIT_LOG_GROUP", "") // the harness sets one for every other test
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	prod, dev := "prod-"+id+"-user", "dev-"+id+"-user"
	for _, name := range []string{prod, dev} {
		fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
	}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	put := func(table string, extra ...string) []string {
		return append([]string{"item", "put", "--table", table, "--item", `{"user_id": "u-1", "status": "new"}`, "--yes", "--confirm", table, "--reason", "central copy test"}, extra...)
	}
	stored := func(table string) bool {
		out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, ConsistentRead: new(true),
			Key: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u-1"}}})
		require.NoError(t, err)
		return len(out.Item) > 0
	}

	out, errOut, code := target.Dynops(t, log, put(prod)...)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	for _, want := range []string{"table " + prod, "needs the central audit copy", "--audit-log-group GROUP", "DYNOPS_AUDIT_LOG_GROUP", "audit_log_group_name", "--without-audit-log-group REASON"} {
		assert.Contains(t, errOut, want)
	}
	assert.False(t, stored(prod), "nothing written (read back)")

	_, errOut, code = target.Dynops(t, log, put(prod, "--without-audit-log-group", "test: CloudWatch Logs is down")...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "--without-audit-log-group is refused on protected table "+prod)
	assert.Contains(t, errOut, "dynops-break-glass")
	assert.False(t, stored(prod))

	_, errOut, code = target.Dynops(t, log, "item", "put", "--table", prod, "--item", `{"user_id": "u-1"}`)
	assert.Equal(t, 0, code, "a dry run writes nothing and needs no central copy: %s", errOut)

	_, errOut, code = target.Dynops(t, log, put(dev)...)
	assert.Equal(t, 0, code, "an unprotected table needs no central copy: %s", errOut)
	assert.True(t, stored(dev))

	_, errOut, code = target.Dynops(t, log, put(prod, "--audit-log-group", harness.AuditLogGroup)...)
	require.Equal(t, 0, code, errOut)
	assert.True(t, stored(prod), "with the central copy the write goes ahead (read back)")
}
