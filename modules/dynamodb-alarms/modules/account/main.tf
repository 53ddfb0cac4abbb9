# The account-level DynamoDB alarms of one account and region (DDB-MON-01):
# UserErrors and AccountProvisionedRead/WriteCapacityUtilization have no table
# dimension, so they are created once, apart from any table: adding or
# removing a table never moves them. modules/dynamodb-stack calls this module
# on its own; modules/dynamodb-alarms calls it with account_alarms_enabled.

locals {
  # Defaults per alarm kind (documented in the `alarms` variable of
  # modules/dynamodb-alarms), overridden field by field.
  defaults = {
    user_errors                        = { threshold = 10, period = 60, evaluation_periods = 10, datapoints_to_alarm = 10, treat_missing_data = "notBreaching" }
    account_read_capacity_utilization  = { threshold = 80, period = 300, evaluation_periods = 2, datapoints_to_alarm = 2, treat_missing_data = "notBreaching" }
    account_write_capacity_utilization = { threshold = 80, period = 300, evaluation_periods = 2, datapoints_to_alarm = 2, treat_missing_data = "notBreaching" }
  }

  kinds = merge(
    {
      user_errors = {
        name        = "${var.name_prefix}-user-errors", metric_name = "UserErrors", statistic = "Sum"
        description = "DDB-MON-01 (account): over 10 requests a minute rejected with HTTP 400 for 10 minutes, in this account and region: a bad deploy, missing IAM, or a wrong table name."
      }
    },
    { for dim in ["read", "write"] : "account_${dim}_capacity_utilization" => {
      name        = "${var.name_prefix}-provisioned-${dim}-capacity-utilization"
      metric_name = "AccountProvisioned${title(dim)}CapacityUtilization", statistic = "Maximum"
      description = "DDB-MON-01 (account): provisioned ${dim} capacity above 80% of the account quota in this region; ask for a quota increase before tables stop scaling."
    } },
  )

  alarms = { for kind, a in local.kinds : kind => merge(a, {
    threshold           = coalesce(try(var.alarms[kind].threshold, null), local.defaults[kind].threshold)
    period              = coalesce(try(var.alarms[kind].period, null), local.defaults[kind].period)
    evaluation_periods  = coalesce(try(var.alarms[kind].evaluation_periods, null), local.defaults[kind].evaluation_periods)
    datapoints_to_alarm = coalesce(try(var.alarms[kind].datapoints_to_alarm, null), try(var.alarms[kind].evaluation_periods, null), local.defaults[kind].datapoints_to_alarm)
    treat_missing_data  = coalesce(try(var.alarms[kind].treat_missing_data, null), local.defaults[kind].treat_missing_data)
  }) if coalesce(try(var.alarms[kind].enabled, null), true) }
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.alarms

  alarm_name          = each.value.name
  alarm_description   = each.value.description
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.datapoints_to_alarm
  treat_missing_data  = each.value.treat_missing_data

  namespace   = "AWS/DynamoDB"
  metric_name = each.value.metric_name
  statistic   = each.value.statistic
  period      = each.value.period
  dimensions  = {} # account metrics have none

  alarm_actions = [var.sns_topic_arn]
  ok_actions    = var.ok_actions_enabled ? [var.sns_topic_arn] : []

  tags = var.tags
}
