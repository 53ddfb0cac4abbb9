# Monitoring (DDB-MON-01): every table of the stack gets its alarms and a
# dashboard (modules/dynamodb-alarms), all notifying one SNS topic per env.
# The account-level alarms are created once, on their own (account_alarms):
# adding or removing a table never moves them.

# The env's alarm topic, encrypted with its own customer managed key that
# only this account's alarms may use (DDB-SEC-04; modules/alarm-topic says
# why alias/aws/sns cannot be used).
module "alarm_topic" {
  source = "../alarm-topic"
  count  = var.alarm_sns_topic_arn == null ? 1 : 0

  name        = "${var.env}-${var.product}-dynamodb-alarms"
  account_id  = local.account_id
  kms_key_arn = var.alarm_topic_kms_key_arn
  tags        = var.tags
}

moved {
  from = aws_sns_topic.alarms[0]
  to   = module.alarm_topic[0].aws_sns_topic.this
}

locals {
  account_id      = coalesce(var.account_id, try(var.access.account_id, null), "unset")
  alarm_topic_arn = var.alarm_sns_topic_arn != null ? var.alarm_sns_topic_arn : module.alarm_topic[0].topic_arn
}

module "alarms" {
  source   = "../dynamodb-alarms"
  for_each = local.tables

  table_name = module.table[each.key].table_name
  # An adopted table keeps its legacy name with the DDB-NAME-01 exception.
  table_name_reason = lookup(module.table[each.key].exceptions, "DDB-NAME-01", "")
  gsi_names         = module.table[each.key].gsi_names
  replica_regions   = try(local.tables[each.key].replica_regions, [])
  billing_mode      = module.table[each.key].billing_mode
  stream_consumers = [for usage, c in module.consumer : {
    function_name = c.function_name
    dlq_name      = c.dlq_name
  } if usage == each.key]

  create_sns_topic = false
  sns_topic_arn    = local.alarm_topic_arn
  alarms           = var.alarm_overrides
  # DDB-CAP-04: a table with a cost ceiling is told when it bites.
  throttle_cause_alarms = merge(var.throttle_cause_alarms, module.table[each.key].on_demand_capped ? { max_on_demand = true } : {})

  tags = var.tags
}

# UserErrors and AccountProvisionedRead/WriteCapacityUtilization: no table
# dimension, one set per account and region.
module "account_alarms" {
  source = "../dynamodb-alarms/modules/account"
  count  = var.account_alarms_enabled ? 1 : 0

  name_prefix   = "${var.env}-dynamodb-account"
  sns_topic_arn = local.alarm_topic_arn
  alarms        = var.alarm_overrides

  tags = var.tags
}

# Before v2.0.0 the account-level alarms were created with the stack's first
# table by name, so adding a table that sorts first destroyed and re-created
# them. Moved from the first table of envs/tables.yaml (order); a stack whose
# first table had another name moves them once by hand, for each kind
# (user_errors, account_read_capacity_utilization, account_write_capacity_utilization):
#   terraform state mv 'module.stack.module.alarms["FIRST"].aws_cloudwatch_metric_alarm.this["KIND"]' \
#     'module.stack.module.account_alarms[0].aws_cloudwatch_metric_alarm.this["KIND"]'
moved {
  from = module.alarms["order"].module.account[0]
  to   = module.account_alarms[0]
}

module "processed_alarms" {
  source = "../dynamodb-alarms"
  count  = length(module.processed)

  table_name       = module.processed[0].table_name
  create_sns_topic = false
  sns_topic_arn    = local.alarm_topic_arn
  alarms           = var.alarm_overrides

  tags = var.tags
}
