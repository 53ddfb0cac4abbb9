package table

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestPlanCostCeiling_DDB_CAP_04: an on-demand table in a protected env
// plans with a maximum for reads and writes, or with a reason (tagged, cleaned, as
// the exception); a dev table needs neither (the "defaults" case).
func TestPlanCostCeiling_DDB_CAP_04(t *testing.T) {
	t.Parallel()
	p, capped := plan(t, "prod capped")
	odt := block(t, capped, "on_demand_throughput")
	assert.EqualValues(t, 4000, odt["max_read_request_units"])
	assert.EqualValues(t, 1000, odt["max_write_request_units"])
	assert.NotContains(t, capped["tags"], "dynops:exception:DDB-CAP-04")
	assert.Equal(t, true, p.RawPlan.PlannedValues.Outputs["on_demand_capped"].Value)

	_, reasoned := plan(t, "prod uncapped with reason")
	assert.Equal(t, "launch week  traffic unknown: OPS-12", reasoned["tags"].(map[string]any)["dynops:exception:DDB-CAP-04"])

	d, dev := plan(t, "defaults")
	assert.NotContains(t, dev["tags"], "dynops:exception:DDB-CAP-04", "dev: no ceiling asked, no exception")
	assert.Equal(t, false, d.RawPlan.PlannedValues.Outputs["on_demand_capped"].Value)
}

// TestPlanStackAlarmsTheCeiling_DDB_CAP_04: the stack turns on the
// max-on-demand throttle alarms of a capped table (and only those).
func TestPlanStackAlarmsTheCeiling_DDB_CAP_04(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "prod capped stack")
	for _, dim := range []string{"read", "write"} {
		for _, at := range []string{dim, "gsi1:" + dim} {
			addr := `module.alarms["user"].aws_cloudwatch_metric_alarm.this["max_on_demand_throttle_events:` + at + `"]`
			_, ok := p.ResourcePlannedValuesMap[addr]
			assert.True(t, ok, "missing %s", addr)
		}
	}
	for addr := range p.ResourcePlannedValuesMap {
		assert.NotContains(t, addr, "key_range_throttle_events", "other causes stay opt-in")
	}
}

// TestPlanCostCeilingRefusals_DDB_CAP_04: no ceiling in a protected env,
// half a ceiling, or a placeholder reason is refused, naming the fix.
func TestPlanCostCeilingRefusals_DDB_CAP_04(t *testing.T) {
	t.Parallel()
	moduleRefusals.Expect(t)
}

func costCeilingRefusals() []harness.Refusal {
	fix := "set on_demand_throughput = { max_read_request_units = N, max_write_request_units = N }"
	where := "table prod-fuga-user is on-demand in protected env prod"
	return []harness.Refusal{
		{Name: "DDB-CAP-04 no ceiling in prod", Vars: with(map[string]any{"env": "prod"}), Want: []string{"DDB-CAP-04:", where, fix}},
		{Name: "DDB-CAP-04 reads only", Vars: with(map[string]any{"env": "prod", "on_demand_throughput": map[string]any{"max_read_request_units": 4000}}), Want: []string{"DDB-CAP-04:", where, fix}},
		{Name: "DDB-CAP-04 placeholder reason", Vars: with(map[string]any{"env": "prod", "on_demand_throughput_reason": "TODO"}), Want: []string{"DDB-CAP-04:", where, "no TODO/FIXME/TBD/XXX placeholder"}},
		{Name: "DDB-CAP-04 an env the caller protects", Vars: with(map[string]any{"env": "stg", "protected_envs": []string{"stg"}}), Want: []string{"DDB-CAP-04:", "protected env stg", fix}},
	}
}
