output "role_arn" {
  description = "ARN of the role: put it in the repository variable DYNOPS_TEST_ROLE_ARN."
  value       = aws_iam_role.this.arn
}

output "oidc_provider_arn" {
  description = "ARN of the GitHub OIDC provider the role trusts."
  value       = local.oidc_provider_arn
}

output "subject" {
  description = "The only `sub` claim the role accepts."
  value       = local.subject
}
