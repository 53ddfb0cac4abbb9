package dynops.plan

# IAM policy documents in the plan: identity policies and table resource policies.
policy_types := {"aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy", "aws_dynamodb_resource_policy"}

allow_statements contains [r.address, s] if {
	some r in resources
	r.type in policy_types
	doc := json.unmarshal(r.change.after.policy)
	some s in as_array(doc.Statement)
	s.Effect == "Allow"
}

actions(s) := {lower(a) | some a in as_array(object.get(s, "Action", []))}

# An Allow with NotResource reaches everything it does not name.
statement_resources(s) := {"*"} if s.NotResource

statement_resources(s) := {r | some r in as_array(object.get(s, "Resource", []))} if not s.NotResource

# DDB-SEC-01: no dynamodb:* (or *) on every resource.
deny contains msg if {
	some [addr, s] in allow_statements
	some a in actions(s)
	a in {"*", "dynamodb:*"}
	some res in statement_resources(s)
	every_table(res)
	msg := sprintf("DDB-SEC-01: %s: statement %q allows %q on %q; grant the exact actions on this env's tables (modules/dynamodb-access)", [addr, object.get(s, "Sid", ""), a, res])
}

every_table(res) if res == "*"

every_table(res) if regex.match(`^arn:[^:]*:dynamodb:[^:]*:[^:]*:(\*|table/\*)$`, res)

# DDB-SEC-03: DynamoDB actions only on table/{env}-* resources; "*" only for
# actions IAM cannot scope (ListTables, ...).
deny contains msg if {
	some [addr, s] in allow_statements
	dynamodb_statement(s)
	some res in statement_resources(s)
	not env_scoped(res)
	not unscoped_only(s, res)
	not other_service(res)
	msg := sprintf("DDB-SEC-03: %s: statement %q grants DynamoDB actions on %q, which is not scoped to this root's environment; use arn:PARTITION:dynamodb:REGION:ACCOUNT:table/{env}-* (env %v)", [addr, object.get(s, "Sid", ""), res, scope_envs])
}

dynamodb_statement(s) if {
	some a in actions(s)
	a in {"*", "dynamodb:*"}
}

dynamodb_statement(s) if {
	some a in actions(s)
	startswith(a, "dynamodb:")
}

env_scoped(res) if {
	some env in scope_envs
	regex.match(sprintf(`^arn:[^:]+:dynamodb:[^:]*:[^:]*:table/%s-`, [env]), res)
}

# A statement on "*" may mix DynamoDB actions IAM cannot scope with other
# services' unscoped actions (e.g. cloudwatch:GetMetricData); any other
# DynamoDB action, or a wildcard, makes it unscoped access.
unscoped_only(s, "*") if {
	every a in actions(s) {
		unscoped_action(a)
	}
}

unscoped_action(a) if a in {lower(u) | some u in data.guideline.unscoped_dynamodb_actions}

unscoped_action(a) if {
	not startswith(a, "dynamodb:")
	not contains(a, "*")
}

other_service(res) if {
	res != "*"
	not regex.match(`^arn:[^:]*:dynamodb:`, res)
}

# DDB-SEC-03: a table resource policy grants only to principals of the table's
# own account. An Allow to another account, to "*" (unless the statement
# requires aws:PrincipalAccount = the account) or on a table whose account the
# plan does not show is denied: a grant outside the account is not this env's.
# The table's account: its ARN, or (a table created in the same plan) the
# account every DynamoDB ARN the policy's statements name.
table_account(r) := acct if {
	m := regex.find_all_string_submatch_n(`^arn:[^:]+:dynamodb:[^:]*:([0-9]{12}):table/`, object.get(r.change.after, "resource_arn", ""), 1)
	acct := m[0][1]
} else := acct if {
	doc := json.unmarshal(r.change.after.policy)
	accts := {m[0][1] |
		some s in as_array(doc.Statement)
		some res in as_array(object.get(s, "Resource", []))
		m := regex.find_all_string_submatch_n(`^arn:[^:]+:dynamodb:[^:]*:([0-9]{12}):table/`, res, 1)
	}
	count(accts) == 1
	some acct in accts
}

aws_principals(s) := {p | some p in as_array(s.Principal.AWS)} if is_object(s.Principal)

aws_principals(s) := {s.Principal} if is_string(s.Principal)

in_account(p, acct) if p == acct

in_account(p, acct) if regex.match(sprintf(`^arn:aws[a-z-]*:(iam|sts)::%s:`, [acct]), p)

pinned_to_account(s, acct) if object.get(object.get(object.get(s, "Condition", {}), "StringEquals", {}), "aws:PrincipalAccount", "") in {acct, [acct]}

deny contains msg if {
	some r in resources
	r.type == "aws_dynamodb_resource_policy"
	not table_account(r)
	msg := sprintf("DDB-SEC-03: %s: the plan does not show the table's account (resource_arn unknown and the statements name no single account's table ARN), so the policy's principals cannot be shown to stay in it; give the table's ARN", [r.address])
}

deny contains msg if {
	some r in resources
	r.type == "aws_dynamodb_resource_policy"
	acct := table_account(r)
	doc := json.unmarshal(r.change.after.policy)
	some s in as_array(doc.Statement)
	s.Effect == "Allow"
	some p in aws_principals(s)
	not in_account(p, acct)
	not pinned(s, p, acct)
	msg := sprintf("DDB-SEC-03: %s: statement %q grants to %q, outside the table's account %s; name roles of account %s (a grant to another account is refused)", [r.address, object.get(s, "Sid", ""), p, acct, acct])
}

pinned(s, "*", acct) if pinned_to_account(s, acct)
