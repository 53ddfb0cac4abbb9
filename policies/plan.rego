# Guard rules of docs/guideline.md over `terraform show -json` plans.
# Every deny message starts with the rule ID. Exceptions are the tags
# `dynops:exception:<RULE>` the modules write (visible in the plan).
# Settings come from data.guideline (policies/data.json).
package dynops.plan

# Resources the plan creates or keeps (not the ones it deletes).
resources contains r if {
	some r in input.resource_changes
	r.mode == "managed"
	r.change.after != null
}

of_type(t) := {r | some r in resources; r.type == t}

tables := of_type("aws_dynamodb_table")

allowed_envs := data.guideline.allowed_envs

# has_exception: the module wrote a reason for turning the rule off (not named
# `exception`: conftest reserves that name).
# A placeholder reason (adopt's "TODO adopt: say why", FIXME, TBD) or one with
# fewer than three letters or digits is no exception: one definition with the
# modules and `dynops check` (policies/data.json, internal/guideline/reason.go).
has_exception(r, rule) if reason_says_why(r.change.after.tags[sprintf("dynops:exception:%s", [rule])])

reason_says_why(reason) if {
	regex.match(data.guideline.reason_substance, reason)
	not regex.match(data.guideline.reason_placeholder, reason)
}

as_array(x) := x if is_array(x)

as_array(x) := [x] if not is_array(x)
