# A table whose resource policy Terraform manages (resource_policy), for
# test/modules/table's DDB-DR-02 test: after a dynops fence is written to the live
# policy, the next plan would drop it and the policy gate must refuse it.
provider "aws" {
  region = "eu-west-1"
}

locals {
  table_arn = "arn:aws:dynamodb:eu-west-1:${var.account_id}:table/${var.env}-${var.product}-user"
}

module "table" {
  source = "../../../modules/dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "user"

  hash_key   = "user_id"
  attributes = [{ name = "user_id", type = "S" }]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled

  # The team's own statement: reads for a role of the same account (DDB-SEC-03).
  resource_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "ReadFromAnalytics"
      Effect    = "Allow"
      Principal = { AWS = "arn:aws:iam::${var.account_id}:role/${var.env}-analytics" }
      Action    = ["dynamodb:GetItem", "dynamodb:Query"]
      Resource  = local.table_arn
    }]
  })
}
