provider "aws" {
  region = "eu-west-1"
}

# A table with the guideline defaults, and its alarms and dashboard (DDB-MON-01).
module "table" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "user"

  hash_key = "user_id"
  attributes = [
    { name = "user_id", type = "S" },
    { name = "email", type = "S" },
  ]
  global_secondary_indexes = [
    { name = "gsi1", hash_key = "email", non_key_attributes = ["display_name"] },
  ]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled
}

module "alarms" {
  source = "../.."

  table_name   = module.table.table_name
  gsi_names    = module.table.gsi_names
  billing_mode = module.table.billing_mode

  # The topic the module creates is encrypted with a key whose policy names the account (DDB-SEC-04).
  account_id = var.account_id

  # This example is the only table of its account and region it watches.
  account_alarms_enabled = var.account_alarms_enabled
  account_alarm_prefix   = "${var.env}-${var.product}-dynamodb-account"

  alarms = var.alarms
}
