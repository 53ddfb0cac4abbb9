output "policy_documents" {
  description = "Policy JSON per role."
  value       = module.access.policy_documents
}

output "trust_policies" {
  description = "Trust policy JSON per role."
  value       = module.access.trust_policies
}

output "role_arns" {
  description = "Role ARN per role."
  value       = module.access.role_arns
}
