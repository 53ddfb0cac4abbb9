package guideline

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Metrics DynamoDB publishes when an on-demand maximum throttles (the
// developer guide's "CloudWatch throttling metrics").
var maxOnDemandMetrics = []string{"ReadMaxOnDemandThroughputThrottleEvents", "WriteMaxOnDemandThroughputThrottleEvents"}

// evaluateCostCeiling checks DDB-CAP-04: an on-demand table in a protected
// env sets an on-demand maximum for reads and for writes (its cost
// ceiling), and, when monitoring was gathered, an alarm watches each
// direction's MaxOnDemandThroughputThrottleEvents (the ceiling biting is an
// incident, not a mystery). A reasoned exception tag relaxes it.
func evaluateCostCeiling(s TableState, mode types.BillingMode, add func(rule, resource string, ok bool, msg string)) {
	name := deref(s.Table.TableName)
	switch {
	case mode != types.BillingModePayPerRequest:
		add(Cap04, name, true, "provisioned: its capacity and auto scaling maximum bound the cost (DDB-CAP-01)")
		return
	case !s.Protected:
		add(Cap04, name, true, "not in a protected env: an on-demand maximum is optional")
		return
	}
	read, write := onDemandMax(s.Table.OnDemandThroughput)
	if read <= 0 || write <= 0 {
		var missing []string
		if read <= 0 {
			missing = append(missing, "reads")
		}
		if write <= 0 {
			missing = append(missing, "writes")
		}
		add(Cap04, name, false, fmt.Sprintf("on-demand table in a protected env without a maximum for %s: no cost ceiling; set on_demand_throughput "+
			"(max_read_request_units and max_write_request_units) in modules/dynamodb-table, or record on_demand_throughput_reason", strings.Join(missing, " and ")))
		return
	}
	capped := fmt.Sprintf("on-demand maximum %d reads and %d writes per second", read, write)
	if s.Monitoring == nil {
		add(Cap04, name, true, capped)
		return
	}
	var missing []string
	for _, metric := range maxOnDemandMetrics {
		if ok, detail := s.Monitoring.alarmed("AWS/DynamoDB", metric, map[string]string{"TableName": name}); !ok {
			missing = append(missing, detail)
		}
	}
	if len(missing) > 0 {
		add(Cap04, name, false, capped+", but "+strings.Join(missing, "; ")+": nobody hears the ceiling bite; set throttle_cause_alarms.max_on_demand in modules/dynamodb-alarms")
		return
	}
	add(Cap04, name, true, capped+", its throttles alarmed")
}

// onDemandMax is the table's maximum read and write request units per
// second (-1 or absent: none).
func onDemandMax(o *types.OnDemandThroughput) (read, write int64) {
	if o == nil {
		return -1, -1
	}
	read, write = -1, -1
	if o.MaxReadRequestUnits != nil {
		read = *o.MaxReadRequestUnits
	}
	if o.MaxWriteRequestUnits != nil {
		write = *o.MaxWriteRequestUnits
	}
	return read, write
}
