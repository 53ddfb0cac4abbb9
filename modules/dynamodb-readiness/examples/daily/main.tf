# A guideline table with PITR and the daily readiness run of its env: the
# guideline check, a restore test of the table's latest restorable point,
# metrics and alarms to an SNS topic. Build the Lambda first:
#   make readiness-zip   # bin/readiness.zip
provider "aws" {
  region = var.region
}

module "user_table" {
  source   = "../../../dynamodb-table"
  env      = "dev"
  product  = var.product
  usage    = "user"
  hash_key = "user_id"
  attributes = [
    { name = "user_id", type = "S" },
  ]

  contributor_insights_enabled = var.contributor_insights_enabled
}

# The readiness alarms' topic, encrypted with a customer managed key that
# only this account's alarms may use (DDB-SEC-04).
module "alerts" {
  source = "../../../alarm-topic"

  name       = "dev-${var.product}-readiness-alerts"
  account_id = var.account_id
}

# The table's own alarms (DDB-MON-01) to the same topic.
module "user_table_alarms" {
  source = "../../../dynamodb-alarms"

  table_name       = module.user_table.table_name
  gsi_names        = module.user_table.gsi_names
  create_sns_topic = false
  sns_topic_arn    = module.alerts.topic_arn
}

module "readiness" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  env                = "dev"
  restore_table_arn  = module.user_table.table_arn
  readiness_zip_path = var.readiness_zip_path
  alarm_actions      = [module.alerts.topic_arn]
}
