package guideline

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTenantIndexKeys_DDB_SEC_02: on a multi-tenant table every GSI is keyed
// by the tenant key or marked cross-tenant with a reason; tables without the
// tag are not multi-tenant and get no DDB-SEC-02 finding.
func TestTenantIndexKeys_DDB_SEC_02(t *testing.T) {
	key := func(hash string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}
	}
	gsi := func(name, hash string) types.GlobalSecondaryIndexDescription {
		return types.GlobalSecondaryIndexDescription{IndexName: aws.String(name), KeySchema: key(hash), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}
	}
	cases := []struct {
		name  string
		hash  string
		gsis  []types.GlobalSecondaryIndexDescription
		tags  map[string]string
		fails map[string]bool // resource -> failing; resources not listed pass
		none  bool            // no DDB-SEC-02 finding at all
	}{
		{name: "not multi-tenant", hash: "pk", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "status")}, tags: map[string]string{}, none: true},
		{name: "every GSI keyed by the tenant key", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "tenant_key"), gsi("gsi2", "tenant_key")}, tags: map[string]string{TenantKeyTag: "tenant_key"}},
		{name: "composite index key", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "tenant_status")}, tags: map[string]string{TenantKeyTag: "tenant_key"}, fails: map[string]bool{"prod-hoge-order/index/gsi1": true}},
		{name: "second index by status", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "tenant_key"), gsi("gsi2", "status")}, tags: map[string]string{TenantKeyTag: "tenant_key"}, fails: map[string]bool{"prod-hoge-order/index/gsi2": true}},
		{name: "cross-tenant with reason", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "status")}, tags: map[string]string{TenantKeyTag: "tenant_key", CrossTenantTagPrefix + "gsi1": "operations"}},
		{name: "cross-tenant blank reason", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "status")}, tags: map[string]string{TenantKeyTag: "tenant_key", CrossTenantTagPrefix + "gsi1": "  "}, fails: map[string]bool{"prod-hoge-order/index/gsi1": true}},
		{name: "reason for another index", hash: "tenant_key", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "status")}, tags: map[string]string{TenantKeyTag: "tenant_key", CrossTenantTagPrefix + "gsi2": "x"}, fails: map[string]bool{"prod-hoge-order/index/gsi1": true}},
		{name: "tenant key not the partition key", hash: "order_id", gsis: []types.GlobalSecondaryIndexDescription{gsi("gsi1", "tenant_key")}, tags: map[string]string{TenantKeyTag: "tenant_key"}, fails: map[string]bool{"prod-hoge-order": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := compliant()
			s.Table.TableName = aws.String("prod-hoge-order")
			s.Table.KeySchema = key(tc.hash)
			s.Table.GlobalSecondaryIndexes = tc.gsis
			s.Tags = tc.tags
			n := 0
			for _, f := range Evaluate(s) {
				if f.Rule != Sec02 {
					continue
				}
				n++
				want := Pass
				if tc.fails[f.Resource] {
					want = Fail
				}
				if f.Status != want {
					t.Errorf("%s: %s (%s), want %s", f.Resource, f.Status, f.Message, want)
				}
				if f.Status == Fail && !f.Failing() {
					t.Errorf("%s: a DDB-SEC-02 failure must fail `dynops check`", f.Resource)
				}
			}
			if tc.none && n != 0 {
				t.Errorf("%d DDB-SEC-02 findings on a table that is not multi-tenant", n)
			}
			if !tc.none && n != 1+len(tc.gsis) {
				t.Errorf("%d DDB-SEC-02 findings, want one for the table and one per GSI (%d)", n, 1+len(tc.gsis))
			}
		})
	}
}
