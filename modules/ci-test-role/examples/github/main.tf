# The role the nightly workflow (.github/workflows/test-aws.yml) assumes
# through GitHub's OIDC provider. Apply it once in the sandbox account, then
# set the repository variable DYNOPS_TEST_ROLE_ARN to the role_arn output.
provider "aws" {
  region = var.region
}

module "ci_test_role" {
  source = "../.."

  github_repository  = var.github_repository
  github_environment = "aws-sandbox"
  account_id         = var.account_id

  tags = {
    owner   = "platform-team"
    purpose = "dynops-ci"
  }
}
