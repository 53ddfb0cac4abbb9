provider "aws" {
  region = "eu-west-1"
}

# Everything the guideline wants is the default: on-demand, PITR 35 days,
# deletion protection, NEW_AND_OLD_IMAGES stream, TTL on `ttl`, AWS owned key.
module "table" {
  source = "../.."

  env     = var.env
  product = var.product
  usage   = "user"

  hash_key = "user_id"
  attributes = [
    { name = "user_id", type = "S" },
    { name = "email", type = "S" },
  ]

  global_secondary_indexes = [
    { name = "gsi1", hash_key = "email", non_key_attributes = ["display_name", "status"] },
  ]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled

  tags = { owner = "platform-team" }
}

# Every table is watched (DDB-MON-01): its alarms and dashboard.
module "alarms" {
  source = "../../../dynamodb-alarms"

  table_name   = module.table.table_name
  gsi_names    = module.table.gsi_names
  billing_mode = module.table.billing_mode

  # The alarm topic the module creates is encrypted with a key whose policy names the account (DDB-SEC-04).
  account_id = var.account_id
}
