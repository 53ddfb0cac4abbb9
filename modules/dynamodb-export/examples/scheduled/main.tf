# Two guideline tables, the hardened export bucket, and scheduled gap-free
# incremental exports with alarms to an SNS topic. Build the Lambda first:
#   make export-scheduler-zip   # bin/export-scheduler.zip
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

module "order_table" {
  source    = "../../../dynamodb-table"
  env       = "dev"
  product   = var.product
  usage     = "order"
  hash_key  = "tenant_key"
  range_key = "order_key"
  attributes = [
    { name = "tenant_key", type = "S" },
    { name = "order_key", type = "S" },
  ]

  contributor_insights_enabled = var.contributor_insights_enabled
}

# The export alarms' topic, encrypted with a customer managed key that only
# this account's alarms may use (DDB-SEC-04).
module "alerts" {
  source = "../../../alarm-topic"

  name       = "dev-${var.product}-export-alerts"
  account_id = var.account_id
}

module "export" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  env     = "dev"
  product = var.product
  tables = [
    { name = module.user_table.table_name, arn = module.user_table.table_arn },
    { name = module.order_table.table_name, arn = module.order_table.table_arn },
  ]

  schedule_enabled   = true
  scheduler_zip_path = var.scheduler_zip_path
  alarm_actions      = [module.alerts.topic_arn]

  contributor_insights_enabled = var.contributor_insights_enabled
}
