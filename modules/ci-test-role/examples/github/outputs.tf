output "role_arn" {
  description = "Set the repository variable DYNOPS_TEST_ROLE_ARN to this."
  value       = module.ci_test_role.role_arn
}

output "subject" {
  description = "The only OIDC subject the role trusts."
  value       = module.ci_test_role.subject
}
