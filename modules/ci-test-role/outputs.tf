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

output "permissions_boundary_arn" {
  description = "The boundary every role the suite creates must carry: set DYNOPS_TEST_PERMISSIONS_BOUNDARY_ARN to it for the suite against AWS."
  value       = aws_iam_policy.boundary.arn
}
