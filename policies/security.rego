package dynops.plan

# Security rules beyond IAM reach (policies/iam.rego): index keys of
# multi-tenant tables, one env per root, the VPC gateway endpoint and the
# CloudTrail data events (docs/guideline.md DDB-SEC-02/03/05/06).

# An env root declares itself: terraform_data.dynops_env_root with input
# { env = "<env>" }. Its env is the one every DynamoDB ARN must name, and an
# env root must carry the network and audit controls (DDB-SEC-05/06).
env_roots := {r.change.after.input.env |
	some r in resources
	r.type == "terraform_data"
	r.name == "dynops_env_root"
}

# The env tags of the plan's resources (every module tags env).
env_tags := {v |
	some r in resources
	v := object.get(object.get(r.change.after, "tags", {}), "env", null)
	is_string(v)
}

# The envs DynamoDB ARNs may name: the root's own (its marker, else the one
# env its resources are tagged with); any allowed env only when the plan
# says neither (a module example without tags).
scope_envs := env_roots if {
	count(env_roots) > 0
} else := env_tags if {
	count(env_tags) > 0
} else := {e | some e in allowed_envs}

# DDB-SEC-03: one root manages one env.
deny contains msg if {
	count(env_roots | env_tags) > 1
	msg := sprintf("DDB-SEC-03: the plan manages more than one environment (env root %v, env tags %v): one root per env, so that no root's roles reach another env's tables", [env_roots, env_tags])
}

# DDB-SEC-02 index keys: on a multi-tenant table (tag dynops:tenant-key) the
# tenant key is the hash key and keys every GSI, unless the GSI is marked
# cross-tenant with a reason: dynamodb:LeadingKeys bounds only the partition
# key a request names, so an index keyed otherwise can carry another tenant's key.
deny contains msg if {
	some r in tables
	tenant_key := trim_space(object.get(object.get(r.change.after, "tags", {}), "dynops:tenant-key", ""))
	tenant_key != ""
	tenant_key != r.change.after.hash_key
	msg := sprintf("DDB-SEC-02: %s: tag dynops:tenant-key names %q but the table's hash key is %q: the tenant key must lead the partition key", [r.address, tenant_key, r.change.after.hash_key])
}

deny contains msg if {
	some r in tables
	tags := object.get(r.change.after, "tags", {})
	tenant_key := trim_space(object.get(tags, "dynops:tenant-key", ""))
	tenant_key != ""
	some g in object.get(r.change.after, "global_secondary_index", [])
	g.hash_key != tenant_key
	trim_space(object.get(tags, sprintf("dynops:cross-tenant:%s", [g.name]), "")) == ""
	msg := sprintf("DDB-SEC-02: %s: GSI %s of a multi-tenant table is keyed by %q, not the tenant key %q: a tenant could write another tenant's key into it; key it by %q (the rest in its range key) or tag dynops:cross-tenant:%s = <reason> and deny it to the tenant role", [r.address, g.name, g.hash_key, tenant_key, tenant_key, g.name])
}

# DDB-SEC-05: DynamoDB through a VPC gateway endpoint without an endpoint policy.
dynamodb_endpoints := {r |
	some r in of_type("aws_vpc_endpoint")
	endswith(r.change.after.service_name, ".dynamodb")
}

deny contains msg if {
	some r in dynamodb_endpoints
	object.get(r.change.after, "vpc_endpoint_type", "Gateway") != "Gateway"
	msg := sprintf("DDB-SEC-05: %s: the DynamoDB endpoint must be a Gateway endpoint (vpc_endpoint_type = \"Gateway\"; modules/dynamodb-vpc-endpoint)", [r.address])
}

deny contains msg if {
	some r in dynamodb_endpoints
	endpoint_policy(r)
	msg := sprintf("DDB-SEC-05: %s: the DynamoDB endpoint has an endpoint policy; leave it out (control stays in IAM, modules/dynamodb-access)", [r.address])
}

deny contains msg if {
	some r in of_type("aws_vpc_endpoint_policy")
	some e in dynamodb_endpoints
	msg := sprintf("DDB-SEC-05: %s: no VPC endpoint policies next to the DynamoDB endpoint %s (control stays in IAM)", [r.address, e.address])
}

endpoint_policy(r) if {
	p := object.get(r.change.after, "policy", null)
	is_string(p)
	trim_space(p) != ""
}

deny contains msg if {
	count(env_roots) > 0
	count(tables) > 0
	count(dynamodb_endpoints) == 0
	msg := sprintf("DDB-SEC-05: env root %v has no DynamoDB VPC gateway endpoint: give the root its network (vpc_id, route_table_ids) so that modules/dynamodb-vpc-endpoint is planned", [env_roots])
}

# DDB-SEC-06: CloudTrail records DynamoDB control- and data-plane calls; no
# filtering but the resource type (filter downstream, e.g. EventBridge).
trails := of_type("aws_cloudtrail")

records_dynamodb_data(t) if {
	some s in object.get(t.change.after, "advanced_event_selector", [])
	some f in s.field_selector
	f.field == "resources.type"
	"AWS::DynamoDB::Table" in f.equals
}

deny contains msg if {
	some t in trails
	some s in object.get(t.change.after, "advanced_event_selector", [])
	dynamodb_selector(s)
	some f in s.field_selector
	not f.field in {"eventCategory", "resources.type"}
	msg := sprintf("DDB-SEC-06: %s: selector %q filters DynamoDB data events on %s; record them all and filter downstream (EventBridge)", [t.address, object.get(s, "name", ""), f.field])
}

dynamodb_selector(s) if {
	some f in s.field_selector
	f.field == "resources.type"
	some v in f.equals
	startswith(v, "AWS::DynamoDB::")
}

deny contains msg if {
	count(env_roots) > 0
	count(tables) > 0
	not any_trail_records_dynamodb
	msg := sprintf("DDB-SEC-06: env root %v has no CloudTrail trail recording DynamoDB data events (resources.type AWS::DynamoDB::Table): add modules/cloudtrail-data-events", [env_roots])
}

any_trail_records_dynamodb if {
	some t in trails
	records_dynamodb_data(t)
}
