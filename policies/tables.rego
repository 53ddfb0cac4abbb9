package dynops.plan

# Table rules of docs/guideline.md. Every message ends with the guideline
# section it enforces; exceptions are the module's dynops:exception:<RULE> tags.

# tags_of: a resource's tags, {} when the plan has none (null), so rules that
# look for an exception tag still fire on untagged resources.
tags_of(r) := t if {
	t := r.change.after.tags
	is_object(t)
} else := {}

see(rule) := sprintf(" (docs/guideline.md#%s)", [lower(rule)])

# DDB-NAME-01: table name {env}-{product}-{usage}, env in the allowed set;
# a legacy name only with the module's name_override_reason.
deny contains msg if {
	some r in tables
	name := r.change.after.name
	not valid_table_name(name)
	not has_exception(r, "DDB-NAME-01")
	msg := sprintf("DDB-NAME-01: %s: table name %q must be {env}-{product}-{usage}: lower case words joined by '-', env one of %v; or adopt it with the module's name_override and name_override_reason%s", [r.address, name, allowed_envs, see("DDB-NAME-01")])
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
	not has_exception(r, "DDB-NAME-02")
	msg := sprintf("DDB-NAME-02: %s: index %q must be a generic sequence name (%s); rename it, e.g. gsi1, or give the module's index_naming_reason (tag dynops:exception:DDB-NAME-02) for an adopted table%s", [r.address, idx.name, pattern, see("DDB-NAME-02")])
}

# DDB-NAME-03: key attributes avoid DynamoDB reserved words (they need
# ExpressionAttributeNames in every expression).
deny contains msg if {
	some r in tables
	some a in object.get(r.change.after, "attribute", [])
	lower(a.name) in reserved_words
	msg := sprintf("DDB-NAME-03: %s: key attribute %q is a DynamoDB reserved word; name what it holds instead (e.g. user_id, created_at)%s", [r.address, a.name, see("DDB-NAME-03")])
}

# DDB-CAP-01: on-demand, or PROVISIONED with a reason and auto scaling on the
# table and every GSI (unless the reason says why there is none).
deny contains msg if {
	some r in tables
	r.change.after.billing_mode == "PROVISIONED"
	not has_exception(r, "DDB-CAP-01")
	msg := sprintf("DDB-CAP-01: %s: PROVISIONED billing needs a reason (tag dynops:exception:DDB-CAP-01, the module's provisioned_reason); otherwise use PAY_PER_REQUEST%s", [r.address, see("DDB-CAP-01")])
}

deny contains msg if {
	some r in tables
	r.change.after.billing_mode == "PROVISIONED"
	not contains(lower(object.get(tags_of(r), "dynops:exception:DDB-CAP-01", "")), "no autoscaling")
	some target in scaling_targets(r)
	some dim in ["Read", "Write"]
	not scaled(target, dim)
	msg := sprintf("DDB-CAP-01: %s: PROVISIONED %s has no %s auto scaling target; add aws_appautoscaling_target + policy (the module does it)%s", [r.address, target, lower(dim), see("DDB-CAP-01")])
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

# DDB-CAP-03: no DAX unless sub-millisecond latency is a requirement (a
# dynops:exception:DDB-CAP-03 tag with the reason on the cluster).
deny contains msg if {
	some r in of_type("aws_dax_cluster")
	not has_exception(r, "DDB-CAP-03")
	msg := sprintf("DDB-CAP-03: %s: DAX is not used unless sub-millisecond reads are a requirement; remove it, or tag dynops:exception:DDB-CAP-03 with the requirement%s", [r.address, see("DDB-CAP-03")])
}

# DDB-IDX-02: projection INCLUDE (with attributes) or KEYS_ONLY; ALL needs an approval.
deny contains msg if {
	some r in tables
	some kind in ["global_secondary_index", "local_secondary_index"]
	some idx in object.get(r.change.after, kind, [])
	idx.projection_type == "ALL"
	not has_exception(r, "DDB-IDX-02")
	msg := sprintf("DDB-IDX-02: %s: index %q projects ALL without approval; use INCLUDE with non_key_attributes or KEYS_ONLY, or set allow_projection_all with projection_all_reason%s", [r.address, idx.name, see("DDB-IDX-02")])
}

deny contains msg if {
	some r in tables
	some kind in ["global_secondary_index", "local_secondary_index"]
	some idx in object.get(r.change.after, kind, [])
	idx.projection_type == "INCLUDE"
	count(non_key_attributes(idx)) == 0
	msg := sprintf("DDB-IDX-02: %s: index %q projects INCLUDE with no non_key_attributes; list the attributes its queries read, or use KEYS_ONLY%s", [r.address, idx.name, see("DDB-IDX-02")])
}

# non_key_attributes: the index's list, [] when the plan has none (null).
non_key_attributes(idx) := x if {
	x := idx.non_key_attributes
	is_array(x)
} else := []

# DDB-IDX-03: no overloaded generic GSI keys (GSI1PK, gsi1_sk, pk, sk) in a
# multi-table design: GSI keys name what they hold.
deny contains msg if {
	some r in tables
	some g in object.get(r.change.after, "global_secondary_index", [])
	some key in [g.hash_key, object.get(g, "range_key", null)]
	is_string(key)
	regex.match(`^(?i)(gsi[0-9]*_?(pk|sk)|pk|sk)$`, key)
	msg := sprintf("DDB-IDX-03: %s: index %q uses the generic key %q (GSI overloading); give the index keys that name what they hold, one index per access pattern%s", [r.address, g.name, key, see("DDB-IDX-03")])
}

# DDB-IDX-04: at most 20 GSIs and 5 LSIs; key attributes S, N or B.
deny contains msg if {
	some r in tables
	some kind, limit in {"global_secondary_index": 20, "local_secondary_index": 5}
	n := count(object.get(r.change.after, kind, []))
	n > limit
	msg := sprintf("DDB-IDX-04: %s: %d %s blocks, more than the %d a table may have; merge indexes or split the table%s", [r.address, n, kind, limit, see("DDB-IDX-04")])
}

deny contains msg if {
	some r in tables
	some a in object.get(r.change.after, "attribute", [])
	not a.type in {"S", "N", "B"}
	msg := sprintf("DDB-IDX-04: %s: key attribute %q has type %q; key attributes are S, N or B%s", [r.address, a.name, a.type, see("DDB-IDX-04")])
}

# DDB-PROT-01: deletion protection on, on tables and on replicas.
deny contains msg if {
	some r in tables
	object.get(r.change.after, "deletion_protection_enabled", false) != true
	not has_exception(r, "DDB-PROT-01")
	msg := sprintf("DDB-PROT-01: %s: deletion protection is off without a reason; set deletion_protection_enabled = true (or the module's deletion_protection_disabled_reason)%s", [r.address, see("DDB-PROT-01")])
}

deny contains msg if {
	some r in tables
	some rep in object.get(r.change.after, "replica", [])
	msg := sprintf("DDB-PROT-01: %s: inline replica in %s cannot have deletion protection; create it with modules/dynamodb-table-replica (aws_dynamodb_table_replica)%s", [r.address, rep.region_name, see("DDB-PROT-01")])
}

deny contains msg if {
	some r in replicas
	object.get(r.change.after, "deletion_protection_enabled", false) != true
	not has_exception(r, "DDB-PROT-01")
	msg := sprintf("DDB-PROT-01: %s: replica deletion protection is off without a reason; set deletion_protection_enabled = true (modules/dynamodb-table-replica does)%s", [r.address, see("DDB-PROT-01")])
}

replicas := of_type("aws_dynamodb_table_replica")

# DDB-PITR-01: PITR on with 35 days, unless a reason is given; replicas
# follow their table (the replica's tags carry the table's exception).
deny contains msg if {
	some r in tables
	not pitr_35_days(r)
	not has_exception(r, "DDB-PITR-01")
	msg := sprintf("DDB-PITR-01: %s: point-in-time recovery must be on with 35 days; turn it on, or give the module's point_in_time_recovery_reason (tag dynops:exception:DDB-PITR-01)%s", [r.address, see("DDB-PITR-01")])
}

pitr_35_days(r) if {
	some p in r.change.after.point_in_time_recovery
	p.enabled == true
	object.get(p, "recovery_period_in_days", 35) in {35, null}
}

deny contains msg if {
	some r in replicas
	object.get(r.change.after, "point_in_time_recovery", false) != true
	not has_exception(r, "DDB-PITR-01")
	msg := sprintf("DDB-PITR-01: %s: replica has point-in-time recovery off without a reason; set point_in_time_recovery = true (modules/dynamodb-table-replica takes the table's)%s", [r.address, see("DDB-PITR-01")])
}

deny contains msg if {
	some r in replicas
	object.get(r.change.after, "point_in_time_recovery", false) == true
	has_exception(r, "DDB-PITR-01")
	msg := sprintf("DDB-PITR-01: %s: the table has a PITR exception (a shorter period) but a replica gets 35 days; keep the table at 35 days or do not replicate it%s", [r.address, see("DDB-PITR-01")])
}

# DDB-STREAM-01: streams, when on, carry NEW_AND_OLD_IMAGES.
deny contains msg if {
	some r in tables
	r.change.after.stream_enabled == true
	r.change.after.stream_view_type != "NEW_AND_OLD_IMAGES"
	not has_exception(r, "DDB-STREAM-01")
	msg := sprintf("DDB-STREAM-01: %s: stream view type %q must be NEW_AND_OLD_IMAGES, or give the module's stream_view_type_reason%s", [r.address, r.change.after.stream_view_type, see("DDB-STREAM-01")])
}
