package dynops.plan

# DDB-CAP-04: an on-demand table in a protected env has a cost ceiling: an
# on-demand maximum for reads and for writes (on_demand_throughput), or the
# module's on_demand_throughput_reason (tag dynops:exception:DDB-CAP-04).
# Protected envs are data.guideline.protected_envs (dynops's built-in list,
# internal/protect; a test keeps the two equal); a table's env is its env
# tag, else the first word of its name.
deny contains msg if {
	some r in tables
	object.get(r.change.after, "billing_mode", "PAY_PER_REQUEST") == "PAY_PER_REQUEST"
	protected_table(r)
	not capped(r)
	not has_exception(r, "DDB-CAP-04")
	msg := sprintf("DDB-CAP-04: %s: on-demand table %q in protected env %q has no cost ceiling; set on_demand_throughput (max_read_request_units and max_write_request_units above 0), or say why not in the module's on_demand_throughput_reason%s", [r.address, r.change.after.name, env_of(r), see("DDB-CAP-04")])
}

# A ceiling nobody hears bite is a silent outage: where the plan holds alarms
# (DDB-MON-01's condition), a capped table in a protected env has one on each
# of Read/WriteMaxOnDemandThroughputThrottleEvents.
deny contains msg if {
	alarms_required
	some r in tables
	protected_table(r)
	capped(r)
	some metric in ["ReadMaxOnDemandThroughputThrottleEvents", "WriteMaxOnDemandThroughputThrottleEvents"]
	not metric_alarmed(r.change.after.name, metric)
	msg := sprintf("DDB-CAP-04: %s: table %q has an on-demand maximum but no alarm on %s (dimension TableName); set throttle_cause_alarms.max_on_demand in modules/dynamodb-alarms (modules/dynamodb-stack does it for capped tables)%s", [r.address, r.change.after.name, metric, see("DDB-CAP-04")])
}

env_of(r) := env if {
	env := lower(tags_of(r).env)
} else := lower(split(r.change.after.name, "-")[0])

protected_table(r) if env_of(r) in data.guideline.protected_envs

capped(r) if {
	some o in object.get(r.change.after, "on_demand_throughput", [])
	o.max_read_request_units > 0
	o.max_write_request_units > 0
}

metric_alarmed(name, metric) if {
	some a in alarms
	a.change.after.metric_name == metric
	a.change.after.dimensions.TableName == name
}
