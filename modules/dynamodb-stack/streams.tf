# Stream consumers (DDB-STREAM-03/04/05): with stream_consumer set, every
# table with streams gets the Lambda consumer from modules/stream-consumer
# (bisect, bounded retries and record age, SQS DLQ, IteratorAge and DLQ
# alarms). The example consumer records processed event IDs in one work
# table per env, `{env}-{product}-stream-processed`.

locals {
  streamed = { for usage, t in local.tables : usage => t if var.stream_consumer != null && try(t.stream_enabled, true) != false }
}

module "processed" {
  source = "../dynamodb-table"
  count  = var.stream_consumer == null ? 0 : 1

  env     = var.env
  product = var.product
  usage   = "stream-processed"

  hash_key                      = "event_id"
  attributes                    = [{ name = "event_id", type = "S" }]
  stream_enabled                = false
  point_in_time_recovery        = { enabled = false }
  point_in_time_recovery_reason = "work table: idempotency keys of stream consumers rebuilt by replay"
  contributor_insights_enabled  = var.contributor_insights_enabled

  tags = var.tags
}

module "consumer" {
  source   = "../stream-consumer"
  for_each = local.streamed

  name             = "${module.table[each.key].table_name}-consumer"
  stream_arn       = module.table[each.key].stream_arn
  filename         = var.stream_consumer.filename
  source_code_hash = var.stream_consumer.source_code_hash

  environment_variables = {
    PROCESSED_TABLE = module.processed[0].table_name
    ACCEPT_POISON   = tostring(var.stream_consumer.accept_poison)
  }
  handler_policy_statements = [{
    sid       = "RecordProcessedEvents"
    actions   = ["dynamodb:PutItem"]
    resources = [module.processed[0].table_arn]
  }]

  permissions_boundary_arn      = var.permissions_boundary_arn
  maximum_retry_attempts        = var.stream_consumer.maximum_retry_attempts
  maximum_record_age_in_seconds = var.stream_consumer.maximum_record_age_in_seconds
  filter_patterns               = var.stream_consumer.filter_patterns

  alarm_sns_topic_arn = local.alarm_topic_arn

  tags = var.tags
}
