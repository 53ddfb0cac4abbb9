package table

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/test/helpers/harness"
)

// envTables is envs/tables.yaml, the tables every env root passes to the stack.
func envTables(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "envs", "tables.yaml"))
	require.NoError(t, err)
	var tables map[string]any
	require.NoError(t, yaml.Unmarshal(b, &tables))
	require.NotEmpty(t, tables)
	return tables
}

// invoice is a new table whose usage sorts before every table of envs/tables.yaml.
func invoice() map[string]any {
	return map[string]any{"hash_key": "invoice_id", "attributes": []map[string]any{{"name": "invoice_id", "type": "S"}}}
}

func withInvoice(t testing.TB) map[string]any {
	tables := envTables(t)
	tables["invoice"] = invoice()
	return tables
}

// accountAlarmKinds are the account-level alarms (no table dimension).
var accountAlarmKinds = []string{"user_errors", "account_read_capacity_utilization", "account_write_capacity_utilization"}

// TestPlanStackAddingATableAddsOnlyItsResources (issue 43 #4): adding a
// table to envs/tables.yaml whose usage sorts before every other (invoice)
// plans that table's resources and nothing else. The two offline plans, of
// the stack over envs/tables.yaml with and without invoice, must hold the
// same resources with the same planned values apart from invoice's: so a
// plan from the first one's state adds invoice and deletes, replaces or
// changes nothing. (The account-level alarms once lived with the first table
// by name, and moved to invoice: three alarms destroyed and re-created.)
func TestPlanStackAddingATableAddsOnlyItsResources(t *testing.T) {
	t.Parallel()
	require.Less(t, "invoice", slices.Sorted(maps.Keys(envTables(t)))[0], "invoice must sort first for this test to mean anything")
	before := plans.Plan(t, "stack tables.yaml").ResourceChangesMap
	after := plans.Plan(t, "stack tables.yaml + invoice").ResourceChangesMap
	for addr, rc := range before {
		later, ok := after[addr]
		if !assert.True(t, ok, "%s is gone from the plan once invoice is added: it would be destroyed", addr) {
			continue
		}
		assert.JSONEq(t, planned(t, rc), planned(t, later), "%s changes once invoice is added", addr)
	}
	added := 0
	for addr := range after {
		if _, ok := before[addr]; !ok {
			added++
			assert.Contains(t, addr, `["invoice"]`, "%s is added with invoice but is not invoice's", addr)
		}
	}
	assert.Positive(t, added, "adding invoice plans its resources")
	for _, kind := range accountAlarmKinds {
		addr := `module.account_alarms[0].aws_cloudwatch_metric_alarm.this["` + kind + `"]`
		assert.Contains(t, before, addr, "the account-level alarms have a home of their own, not a table's")
	}
}

// planned is a resource change's planned values and which of them are
// unknown, as JSON.
func planned(t *testing.T, rc *tfjson.ResourceChange) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"after": rc.Change.After, "unknown": rc.Change.AfterUnknown, "actions": rc.Change.Actions})
	require.NoError(t, err)
	return string(b)
}

// TestStackMovesTheAccountAlarmsOfAnOldState (issue 43 #4): a stack applied
// before v2.0.0 kept the account-level alarms with its first table (order,
// in envs/tables.yaml): module.alarms["order"].aws_cloudwatch_metric_alarm.this[KIND].
// The stack is applied on the emulator, its account alarms are put back at
// those addresses (terraform state mv: the state an older stack left), and a
// plan that adds invoice moves them to module.account_alarms[0] with the
// moved blocks: nothing is destroyed or replaced, and what is created is
// invoice's.
func TestStackMovesTheAccountAlarmsOfAnOldState(t *testing.T) {
	t.Parallel()
	entry := map[string]any{
		"hash_key": "tenant_key", "range_key": "order_key",
		"attributes":                          []map[string]any{{"name": "tenant_key", "type": "S"}, {"name": "order_key", "type": "S"}},
		"deletion_protection_enabled":         false,
		"deletion_protection_disabled_reason": "test table, destroyed after the test",
	}
	vars := stackVars(map[string]any{"order": entry})
	vars["product"] = harness.UniqueID()
	opts := target.Options(t, stack, vars)
	target.Teardown(t, opts, false)
	terraform.InitAndApply(t, opts)

	for _, kind := range accountAlarmKinds {
		terraform.RunTerraformCommand(t, opts, "state", "mv",
			`module.account_alarms[0].aws_cloudwatch_metric_alarm.this["`+kind+`"]`,
			`module.alarms["order"].aws_cloudwatch_metric_alarm.this["`+kind+`"]`)
	}

	invoiceEntry := invoice()
	invoiceEntry["deletion_protection_enabled"] = false
	invoiceEntry["deletion_protection_disabled_reason"] = "test table, destroyed after the test"
	opts.Vars["tables"] = map[string]any{"order": entry, "invoice": invoiceEntry}
	opts.PlanFilePath = filepath.Join(t.TempDir(), "plan.out")
	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	for _, kind := range accountAlarmKinds {
		addr := `module.account_alarms[0].aws_cloudwatch_metric_alarm.this["` + kind + `"]`
		rc, ok := p.ResourceChangesMap[addr]
		if !assert.True(t, ok, "%s is in the plan", addr) {
			continue
		}
		assert.Equal(t, `module.alarms["order"].aws_cloudwatch_metric_alarm.this["`+kind+`"]`, rc.PreviousAddress, "%s moved from the first table's instance", addr)
		assert.True(t, rc.Change.Actions.NoOp(), "%s: moved and unchanged, not re-created: %v", addr, rc.Change.Actions)
	}
	created := 0
	for addr, rc := range p.ResourceChangesMap {
		a := rc.Change.Actions
		assert.False(t, a.Delete() || a.DestroyBeforeCreate() || a.CreateBeforeDestroy(), "%s is destroyed or replaced: %v", addr, a)
		if a.Create() {
			created++
			assert.True(t, strings.Contains(addr, `["invoice"]`), "%s is created, but is not invoice's", addr)
		}
	}
	assert.Positive(t, created, "the plan adds invoice")
}
