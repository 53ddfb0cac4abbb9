package dynops.plan

# DDB-DR-02: a plan never lifts a write fence. `dynops dr failover` and
# `dynops migrate cutover` add a statement with a dynops fence Sid
# (data.guideline.fence_sids, internal/failover) to the table's live resource
# policy; terraform's refresh reads it (the plan's `before`), and a plan of a
# table with `resource_policy` set would write the module's policy back
# without it. Only the owner lifts a fence (`dynops dr failback`,
# `dynops migrate rollback`). An `after` not known until apply cannot be
# shown to keep the fence, so it is denied too (fail closed).
deny contains msg if {
	some r in input.resource_changes
	r.mode == "managed"
	r.type == "aws_dynamodb_resource_policy"
	some sid in fence_sids(r.change.before)
	not keeps_fence(r.change, sid)
	msg := sprintf("DDB-DR-02: %s: the plan removes the write fence %q from %s's live resource policy (%s); only its owner lifts it (`dynops dr failback` for DynopsDRFenceWrites*, `dynops migrate rollback` for DynopsMigrateFenceWrites): apply after that, or plan with -target to leave this policy alone (docs/dr.md#terraform-and-the-fence)", [r.address, sid, object.get(r.change.before, "resource_arn", "the table"), fence_actions(r.change)])
}

fence_sids(state) := {sid |
	is_object(state)
	doc := json.unmarshal(state.policy)
	some s in as_array(doc.Statement)
	sid := object.get(s, "Sid", "")
	sid in data.guideline.fence_sids
}

keeps_fence(change, sid) if {
	not object.get(object.get(change, "after_unknown", {}), "policy", false) == true
	sid in fence_sids(change.after)
}

fence_actions(change) := "the policy is deleted" if change.after == null

fence_actions(change) := "the new policy is known only at apply" if {
	change.after != null
	object.get(object.get(change, "after_unknown", {}), "policy", false) == true
}

fence_actions(change) := "the new policy has no such statement" if {
	change.after != null
	not object.get(object.get(change, "after_unknown", {}), "policy", false) == true
}
