provider "aws" {
  region = "eu-west-1"
}

# The Go consumer in this folder (handler/, main.go), deployed on a table's
# stream: build the zip first with `make consumer-zip` (bin/consumer.zip).
module "table" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "user"

  hash_key   = "user_id"
  attributes = [{ name = "user_id", type = "S" }]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled
}

# Where the idempotent handler records processed event IDs.
module "processed" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "stream-processed"

  hash_key                      = "event_id"
  attributes                    = [{ name = "event_id", type = "S" }]
  stream_enabled                = false
  point_in_time_recovery        = { enabled = false }
  point_in_time_recovery_reason = "work table: idempotency keys of stream consumers rebuilt by replay"

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled
}

# The alarms' topic, encrypted with a customer managed key that only this
# account's alarms may use (DDB-SEC-04).
module "alarm_topic" {
  source = "../../../alarm-topic"

  name       = "${var.env}-${var.product}-consumer-alarms"
  account_id = var.account_id
}

# Both tables get the guideline's alarms (DDB-MON-01); the consumer's own
# alarms (IteratorAge, errors, DLQ) come with modules/stream-consumer.
module "table_alarms" {
  source   = "../../../dynamodb-alarms"
  for_each = { user = module.table.table_name, processed = module.processed.table_name }

  table_name       = each.value
  gsi_names        = each.key == "user" ? module.table.gsi_names : []
  create_sns_topic = false
  sns_topic_arn    = module.alarm_topic.topic_arn
}

module "consumer" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  name       = "${module.table.table_name}-consumer"
  stream_arn = module.table.stream_arn
  filename   = var.filename

  environment_variables = {
    PROCESSED_TABLE = module.processed.table_name
    ACCEPT_POISON   = tostring(var.accept_poison)
  }
  handler_policy_statements = [{
    sid       = "RecordProcessedEvents"
    actions   = ["dynamodb:PutItem"]
    resources = [module.processed.table_arn]
  }]

  filter_patterns     = var.filter_patterns
  alarm_sns_topic_arn = module.alarm_topic.topic_arn
}
