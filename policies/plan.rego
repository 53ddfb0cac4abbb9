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
has_exception(r, rule) if trim_space(r.change.after.tags[sprintf("dynops:exception:%s", [rule])]) != ""

as_array(x) := x if is_array(x)

as_array(x) := [x] if not is_array(x)
