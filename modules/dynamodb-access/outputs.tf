output "policy_arns" {
  description = "Policy ARN per role: application, tenant, investigator, data-patch, dynops-operator (only those created)."
  value       = { for k, p in aws_iam_policy.this : k => p.arn }
}

output "policy_documents" {
  description = "Policy JSON per role, as attached (for review and for the isolation tests)."
  value       = local.policies
}

output "role_arns" {
  description = "Role ARN per role; empty unless create_roles = true."
  value       = { for k, r in aws_iam_role.this : k => r.arn }
}

output "role_names" {
  description = "Role name per role; empty unless create_roles = true."
  value       = { for k, r in aws_iam_role.this : k => r.name }
}

output "trust_policies" {
  description = "Trust policy JSON per role (the tenant role requires the tenant session tag)."
  value       = var.create_roles ? local.trust : {}
}

output "audit_log_group_name" {
  description = "The central audit copy's log group (pass it as `dynops --audit-log-group`); null when audit_log_group is null."
  value       = try(aws_cloudwatch_log_group.audit[0].name, null)
}
