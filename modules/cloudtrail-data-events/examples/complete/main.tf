provider "aws" {
  region = var.region
}

# DynamoDB control- and data-plane calls of the env recorded by CloudTrail (DDB-SEC-06).
module "trail" {
  source = "../.."

  env           = var.env
  account_id    = var.account_id
  force_destroy = var.force_destroy
}
