package dynops.plan

# DDB-NAME-01: table name {env}-{product}-{usage}, env in the allowed set.
deny contains msg if {
	some r in tables
	name := r.change.after.name
	not valid_table_name(name)
	msg := sprintf("DDB-NAME-01: %s: table name %q must be {env}-{product}-{usage}: lower case words joined by '-', env one of %v", [r.address, name, allowed_envs])
}

valid_table_name(name) if {
	some env in allowed_envs
	regex.match(sprintf("^%s(-[a-z0-9]+){2,}$", [env]), name)
}

# DDB-NAME-02: index names gsi1, gsi2, ... / lsi1, lsi2, ...
deny contains msg if {
	some r in tables
	some kind, pattern in {"global_secondary_index": "^gsi[1-9][0-9]*$", "local_secondary_index": "^lsi[1-9][0-9]*$"}
	some idx in object.get(r.change.after, kind, [])
	not regex.match(pattern, idx.name)
	msg := sprintf("DDB-NAME-02: %s: index %q must be a generic sequence name (%s); rename it, e.g. gsi1", [r.address, idx.name, pattern])
}

# DDB-CAP-01: on-demand, or PROVISIONED with a reason and auto scaling on the
# table and every GSI (unless the reason says why there is none).
deny contains msg if {
	some r in tables
	r.change.after.billing_mode == "PROVISIONED"
	not has_exception(r, "DDB-CAP-01")
	msg := sprintf("DDB-CAP-01: %s: PROVISIONED billing needs a reason (tag dynops:exception:DDB-CAP-01, the module's provisioned_reason); otherwise use PAY_PER_REQUEST", [r.address])
}

deny contains msg if {
	some r in tables
	r.change.after.billing_mode == "PROVISIONED"
	not contains(lower(object.get(r.change.after.tags, "dynops:exception:DDB-CAP-01", "")), "no autoscaling")
	some target in scaling_targets(r)
	some dim in ["Read", "Write"]
	not scaled(target, dim)
	msg := sprintf("DDB-CAP-01: %s: PROVISIONED %s has no %s auto scaling target; add aws_appautoscaling_target + policy (the module does it)", [r.address, target, lower(dim)])
}

scaling_targets(r) := array.concat(
	[sprintf("table/%s", [r.change.after.name])],
	[sprintf("table/%s/index/%s", [r.change.after.name, g.name]) | some g in object.get(r.change.after, "global_secondary_index", [])],
)

scaled(resource_id, dim) if {
	some t in of_type("aws_appautoscaling_target")
	t.change.after.resource_id == resource_id
	endswith(t.change.after.scalable_dimension, sprintf(":%sCapacityUnits", [dim]))
}

# DDB-IDX-02: projection INCLUDE (with attributes) or KEYS_ONLY; ALL needs an approval.
deny contains msg if {
	some r in tables
	some kind in ["global_secondary_index", "local_secondary_index"]
	some idx in object.get(r.change.after, kind, [])
	idx.projection_type == "ALL"
	not has_exception(r, "DDB-IDX-02")
	msg := sprintf("DDB-IDX-02: %s: index %q projects ALL without approval; use INCLUDE with non_key_attributes or KEYS_ONLY, or set allow_projection_all with projection_all_reason", [r.address, idx.name])
}

deny contains msg if {
	some r in tables
	some kind in ["global_secondary_index", "local_secondary_index"]
	some idx in object.get(r.change.after, kind, [])
	idx.projection_type == "INCLUDE"
	count(object.get(idx, "non_key_attributes", [])) == 0
	msg := sprintf("DDB-IDX-02: %s: index %q projects INCLUDE with no non_key_attributes; list the attributes its queries read, or use KEYS_ONLY", [r.address, idx.name])
}

# DDB-PROT-01: deletion protection on.
deny contains msg if {
	some r in tables
	object.get(r.change.after, "deletion_protection_enabled", false) != true
	not has_exception(r, "DDB-PROT-01")
	msg := sprintf("DDB-PROT-01: %s: deletion protection is off without a reason; set deletion_protection_enabled = true (or the module's deletion_protection_disabled_reason)", [r.address])
}

# DDB-PITR-01: PITR on with 35 days, unless a reason is given.
deny contains msg if {
	some r in tables
	not pitr_35_days(r)
	not has_exception(r, "DDB-PITR-01")
	msg := sprintf("DDB-PITR-01: %s: point-in-time recovery must be on with 35 days; turn it on, or give the module's point_in_time_recovery.reason (tag dynops:exception:DDB-PITR-01)", [r.address])
}

pitr_35_days(r) if {
	some p in r.change.after.point_in_time_recovery
	p.enabled == true
	object.get(p, "recovery_period_in_days", 35) in {35, null}
}

# DDB-STREAM-01: streams, when on, carry NEW_AND_OLD_IMAGES.
deny contains msg if {
	some r in tables
	r.change.after.stream_enabled == true
	r.change.after.stream_view_type != "NEW_AND_OLD_IMAGES"
	not has_exception(r, "DDB-STREAM-01")
	msg := sprintf("DDB-STREAM-01: %s: stream view type %q must be NEW_AND_OLD_IMAGES, or give the module's stream_view_type_reason", [r.address, r.change.after.stream_view_type])
}
