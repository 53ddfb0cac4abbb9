package guideline

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Tags that mark a multi-tenant table (DDB-SEC-02), written by the table's
// Terraform (modules/dynamodb-table validates them at plan time).
const (
	// TenantKeyTag names the tenant key attribute: the table's partition key.
	TenantKeyTag = "dynops:tenant-key"
	// CrossTenantTagPrefix + index name records why an index is not tenant-scoped.
	CrossTenantTagPrefix = "dynops:cross-tenant:"
)

// evaluateTenantKeys: dynamodb:LeadingKeys bounds only the partition key a
// request names, so on a multi-tenant table the tenant key must be the
// table's partition key and every tenant-scoped GSI's; a GSI keyed by
// another attribute lets a tenant write an item into another tenant's index
// queries, unless it is marked cross-tenant with a reason.
func evaluateTenantKeys(s TableState, add func(rule, resource string, ok bool, msg string)) {
	tenantKey := strings.TrimSpace(s.Tags[TenantKeyTag])
	if tenantKey == "" {
		return
	}
	name := deref(s.Table.TableName)
	if hk := hashKey(s.Table.KeySchema); hk == tenantKey {
		add(Sec02, name, true, fmt.Sprintf("tenant key %s is the partition key", tenantKey))
	} else {
		add(Sec02, name, false, fmt.Sprintf("tag %s names %q but the partition key is %q: dynamodb:LeadingKeys would not bound the tenant", TenantKeyTag, tenantKey, hk))
	}
	for _, g := range s.Table.GlobalSecondaryIndexes {
		idx := deref(g.IndexName)
		res := name + "/index/" + idx
		hk := hashKey(g.KeySchema)
		reason := strings.TrimSpace(s.Tags[CrossTenantTagPrefix+idx])
		switch {
		case hk == tenantKey:
			add(Sec02, res, true, fmt.Sprintf("keyed by the tenant key %s", tenantKey))
		case reason != "":
			add(Sec02, res, true, fmt.Sprintf("keyed by %s, cross-tenant: %s (the tenant role must be denied it)", hk, reason))
		default:
			add(Sec02, res, false, fmt.Sprintf("keyed by %q, not the tenant key %q: a tenant can write another tenant's key into it; key it by %s (the rest in its range key) or tag %s%s with the reason it spans tenants", hk, tenantKey, tenantKey, CrossTenantTagPrefix, idx))
		}
	}
}

func hashKey(ks []types.KeySchemaElement) string {
	for _, k := range ks {
		if k.KeyType == types.KeyTypeHash {
			return deref(k.AttributeName)
		}
	}
	return ""
}
