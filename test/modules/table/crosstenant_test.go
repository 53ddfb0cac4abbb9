package table

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crossTenantVars is a stack with a tenant table (order) whose GSIs are
// keyed by the tenant key (gsi1) or not (gsi2, gsi3), without a
// dynops:tenant-key tag, and a table that is not a tenant table (user).
func crossTenantVars() map[string]any {
	order := map[string]any{
		"hash_key": "tenant_key", "range_key": "order_key",
		"attributes": []map[string]any{{"name": "tenant_key", "type": "S"}, {"name": "order_key", "type": "S"}, {"name": "email", "type": "S"}, {"name": "status", "type": "S"}},
		"global_secondary_indexes": []map[string]any{
			{"name": "gsi1", "hash_key": "tenant_key", "range_key": "status", "non_key_attributes": []string{"total"}},
			{"name": "gsi2", "hash_key": "email", "non_key_attributes": []string{"total"}},
			{"name": "gsi3", "hash_key": "status", "non_key_attributes": []string{"total"}},
		},
	}
	userTable := user(map[string]any{"global_secondary_indexes": []map[string]any{{"name": "gsi1", "hash_key": "email", "non_key_attributes": []string{"x"}}}})
	vars := stackVars(map[string]any{"order": order, "user": userTable})
	vars["access"] = map[string]any{"account_id": "123456789012", "tenant_tables": map[string]any{"order": map[string]any{"key_prefix": "TENANT#"}}}
	return vars
}

// TestPlanStackDeniesCrossTenantIndexesWithoutTag (DDB-SEC-02, issue 29
// Medium 3): a tenant table of the stack with no dynops:tenant-key tag and no
// cross_tenant_indexes still gets DenyCrossTenantIndexes on every GSI not
// keyed by its partition key, read from the planned tenant policy; a GSI keyed
// by the tenant key stays open to the tenant role, and a table that is not a
// tenant table is untouched.
func TestPlanStackDeniesCrossTenantIndexesWithoutTag(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "stack cross-tenant")
	rc, ok := p.ResourcePlannedValuesMap[`module.access[0].aws_iam_policy.this["tenant"]`]
	require.True(t, ok, "the stack plans the tenant policy")
	var doc struct {
		Statement []struct {
			Sid      string
			Effect   string
			Action   any
			Resource any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(rc.AttributeValues["policy"].(string)), &doc))
	var denied []any
	for _, s := range doc.Statement {
		if s.Sid == "DenyCrossTenantIndexes" {
			assert.Equal(t, "Deny", s.Effect)
			assert.Equal(t, []any{"dynamodb:*"}, s.Action)
			switch r := s.Resource.(type) {
			case []any:
				denied = r
			default:
				denied = []any{r}
			}
		}
	}
	arn := "arn:aws:dynamodb:eu-west-1:123456789012:table/"
	assert.ElementsMatch(t, []any{arn + "dev-hoge-order/index/gsi2", arn + "dev-hoge-order/index/gsi3"}, denied,
		"every GSI of the tenant table not keyed by tenant_key, and only those")
}
