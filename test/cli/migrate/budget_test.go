package migrate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/test/helpers/fixture"
)

// budgetsOf reads the capacity-budget actions of the last audit record:
// the kind, budget and units used per table.
func budgetsOf(t *testing.T, log string) map[string]map[string]any {
	t.Helper()
	recs, err := audit.Read(log)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	out := map[string]map[string]any{}
	for _, a := range recs[len(recs)-1].Actions {
		if a.What != audit.ActCapacityBudget {
			continue
		}
		b, _ := json.Marshal(a.Detail)
		var d map[string]any
		require.NoError(t, json.Unmarshal(b, &d))
		out[a.Target] = d
	}
	return out
}

// TestMigrateCapacityBudgets: backfill holds its Scan of the source to
// --max-read-units and its writes to each destination to --max-write-units,
// catch-up its writes, verify its Scans of every table; each budget is said
// before the run and the audit records it with what was used (as the
// emulator reported it).
func TestMigrateCapacityBudgets(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 120)
	dir := t.TempDir()
	state, log := filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl")
	dests := []string{"dev-aiagent-tenants", "dev-aiagent-users", "dev-aiagent-tasks"}

	_, errOut, code := target.Dynops(t, log, "migrate", "backfill", "--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched",
		"--max-read-units", "200", "--max-write-units", "300")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "read budget on "+source+": 200 units/s (--max-read-units)")
	b := budgetsOf(t, log)
	require.Contains(t, b, source, "the source's read budget is audited")
	assert.Equal(t, "read", b[source]["budget"].(map[string]any)["kind"])
	assert.Greater(t, b[source]["used"].(map[string]any)["units_used"].(float64), 0.0, "the Scans were charged")
	for _, dst := range dests {
		require.Contains(t, b, dst, "each destination's write budget is audited")
		assert.Equal(t, 300.0, b[dst]["budget"].(map[string]any)["budget_units_per_second"], dst)
		assert.Greater(t, b[dst]["used"].(map[string]any)["units_used"].(float64), 0.0, "%s: the writes were charged", dst)
	}

	// Changes for the catch-up: items of the source updated.
	for _, it := range scanAll(t, d.db, source)[:10] {
		it["catch_up_note"] = s("changed after the backfill")
		fixture.Put(t, d.db, source, []map[string]types.AttributeValue{it})
	}
	_, errOut, code = target.Dynops(t, log, "migrate", "catch-up", "--source", source, "--routes", routesFile(), "--state", state, "--max-write-units", "100")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "write budget on dev-aiagent-users: 100 units/s (--max-write-units)")
	b = budgetsOf(t, log)
	assert.NotContains(t, b, source, "catch-up reads the stream, not the table: no read budget")
	used := 0.0
	for _, dst := range dests {
		require.Contains(t, b, dst, "every destination has its write budget")
	}
	for _, d := range b {
		if u, ok := d["used"].(map[string]any); ok {
			used += u["units_used"].(float64)
		}
	}
	assert.Greater(t, used, 0.0, "the catch-up's writes were charged")

	out, errOut, code := target.Dynops(t, log, "migrate", "verify", "--source", source, "--routes", routesFile(), "--state", state, "--max-read-units", "150", "-o", "json")
	require.Equal(t, 0, code, errOut)
	b = budgetsOf(t, log)
	for _, tbl := range append([]string{source}, dests...) {
		require.Contains(t, b, tbl, "verify scans every table under its own budget")
		assert.Greater(t, b[tbl]["used"].(map[string]any)["units_used"].(float64), 0.0, tbl)
	}
	// -o json says the same as the audit: each budget and what it used.
	var doc struct {
		Capacity []capacity.Use `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.GreaterOrEqual(t, len(doc.Capacity), len(dests)+1, "a budget per scanned table in the JSON (the source and every destination of the routes)")
	for _, u := range doc.Capacity {
		assert.Equal(t, 150.0, u.UnitsPerSecond, u.Table)
		require.NotNil(t, u.Used, "%s: the JSON says what the Scans used", u.Table)
		assert.Equal(t, b[u.Table]["used"].(map[string]any)["units_used"], u.Used.Used, "%s: the JSON and the audit agree", u.Table)
	}
}

// TestPlanEstimatesEachPath: migrate plan estimates the three backfill
// paths from the source's size (the scan path reads and writes capacity,
// the export path writes only, the export+import path uses none and is
// priced per GB), and prices them with a price file.
func TestPlanEstimatesEachPath(t *testing.T) {
	d := setup(t, true)
	d.populate(t, 120)
	prices := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"source":"test list","date":"2026-11-01","regions":{"`+target.Region+`":{"read_request_unit":0.00000025,"write_request_unit":0.00000125,"export_per_gb":0.1,"import_per_gb":0.15}}}`), 0o644))
	out, errOut, code := target.Dynops(t, "", "migrate", "plan", "--source", source, "--routes", routesFile(), "--allow-unmatched", "--price-file", prices, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Paths []struct {
			Name       string   `json:"name"`
			ReadUnits  float64  `json:"read_units"`
			WriteUnits float64  `json:"write_units"`
			ExportGB   float64  `json:"export_gb"`
			ImportGB   float64  `json:"import_gb"`
			PriceUSD   *float64 `json:"price_usd"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Len(t, doc.Paths, 3)
	scan, exp, imp := doc.Paths[0], doc.Paths[1], doc.Paths[2]
	assert.Equal(t, "scan", scan.Name)
	assert.Greater(t, scan.ReadUnits, 0.0, "the scan path reads the source")
	assert.Greater(t, scan.WriteUnits, 0.0, "and writes the destinations")
	assert.Zero(t, exp.ReadUnits, "an export reads no capacity")
	assert.Equal(t, scan.WriteUnits, exp.WriteUnits)
	assert.Greater(t, exp.ExportGB, 0.0)
	assert.Zero(t, imp.ReadUnits+imp.WriteUnits, "export+import uses no capacity")
	assert.Equal(t, imp.ExportGB, imp.ImportGB)
	for _, p := range doc.Paths {
		require.NotNil(t, p.PriceUSD, "%s is priced with the price file", p.Name)
		assert.Greater(t, *p.PriceUSD, 0.0, p.Name)
	}
}
