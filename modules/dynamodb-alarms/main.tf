# CloudWatch alarms and a dashboard for one DynamoDB table (DDB-MON-01),
# starting from AWS's recommended alarms for DynamoDB
# (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Best_Practice_Recommended_Alarms_AWS_Services.html#DynamoDB).
# Every alarm notifies the SNS topic on ALARM and on OK.

data "aws_region" "current" {}

locals {
  region = data.aws_region.current.name
  env    = split("-", var.table_name)[0]

  account_prefix = coalesce(var.account_alarm_prefix, "${local.env}-dynamodb-account")

  topic_arn = var.create_sns_topic ? module.topic[0].topic_arn : var.sns_topic_arn

  # Defaults per alarm kind (documented in the `alarms` variable), overridden
  # field by field; the account-level kinds' are in modules/account.
  defaults = {
    throttled_requests            = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    read_throttle_events          = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    write_throttle_events         = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    gsi_read_throttle_events      = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    gsi_write_throttle_events     = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    key_range_throttle_events     = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    max_on_demand_throttle_events = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    account_limit_throttle_events = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    system_errors                 = { threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 5, treat_missing_data = "notBreaching" }
    latency                       = { threshold = null, period = 60, evaluation_periods = 10, datapoints_to_alarm = 10, treat_missing_data = "notBreaching" }
    consumed_read_capacity        = { threshold = 80, period = 60, evaluation_periods = 10, datapoints_to_alarm = 10, treat_missing_data = "notBreaching" }
    consumed_write_capacity       = { threshold = 80, period = 60, evaluation_periods = 10, datapoints_to_alarm = 10, treat_missing_data = "notBreaching" }
    replication_latency           = { threshold = 30000, period = 60, evaluation_periods = 10, datapoints_to_alarm = 10, treat_missing_data = "ignore" }
  }
  settings = { for kind, d in local.defaults : kind => {
    enabled             = coalesce(try(var.alarms[kind].enabled, null), true)
    threshold           = try(coalesce(try(var.alarms[kind].threshold, null), d.threshold), null)
    period              = coalesce(try(var.alarms[kind].period, null), d.period)
    evaluation_periods  = coalesce(try(var.alarms[kind].evaluation_periods, null), d.evaluation_periods)
    datapoints_to_alarm = coalesce(try(var.alarms[kind].datapoints_to_alarm, null), try(var.alarms[kind].evaluation_periods, null), d.datapoints_to_alarm)
    treat_missing_data  = coalesce(try(var.alarms[kind].treat_missing_data, null), d.treat_missing_data)
  } }

  table_dim = { TableName = var.table_name }

  # Per-cause throttle alarms (throttle_cause_alarms): the metric's middle
  # part, the cause and the runbook section that fixes it.
  throttle_causes = {
    key_range = {
      metric = "KeyRangeThroughput", slug = "key-range"
      why    = "a hot key: requests to one partition key exceed one partition's limit (more capacity does not help). Find the key with Contributor Insights (throttled keys), then spread or cache it: runbooks/throttling.md#hot-key"
    }
    max_on_demand = {
      metric = "MaxOnDemandThroughput", slug = "max-on-demand"
      why    = "the on-demand maximum (on_demand_throughput, the cost ceiling of DDB-CAP-04) caps the traffic. Raise the cap if the traffic is expected: runbooks/throttling.md#on-demand-maximum"
    }
    account_limit = {
      metric = "AccountLimit", slug = "account-limit"
      why    = "the account's per-table throughput quota in this region. Request an increase in Service Quotas: runbooks/throttling.md#account-quota"
    }
  }
  # (cause, index or "" for the table, read/write) for each enabled cause.
  throttle_cause_targets = [for t in setproduct([for c, on in var.throttle_cause_alarms : c if on], concat([""], var.gsi_names), ["read", "write"]) : {
    cause = t[0], index = t[1], dim = t[2]
  }]

  # One metric, or the sum of one metric over the key operations (metric math).
  single = { expression = null, metrics = [] }
  per_operation = { for metric in ["ThrottledRequests", "SystemErrors"] : metric => {
    expression = "SUM(METRICS())"
    metrics = [for i, op in var.key_operations : {
      id = "m${i + 1}", metric_name = metric, stat = "Sum", dimensions = { TableName = var.table_name, Operation = op }
    }]
  } }
  capacity_math = { for dim in ["Read", "Write"] : dim => {
    # Percent of provisioned capacity used: consumed units per second over provisioned units.
    expression = "100 * (m1 / PERIOD(m1)) / m2"
    metrics = [
      { id = "m1", metric_name = "Consumed${dim}CapacityUnits", stat = "Sum", dimensions = local.table_dim },
      { id = "m2", metric_name = "Provisioned${dim}CapacityUnits", stat = "Average", dimensions = local.table_dim },
    ]
  } }

  table_alarms = merge(
    {
      throttled_requests = merge(local.per_operation["ThrottledRequests"], {
        kind        = "throttled_requests", name = "${var.table_name}-throttled-requests", metric_name = "ThrottledRequests", statistic = null, dimensions = {}
        description = "DDB-MON-01 (mandatory): requests to ${var.table_name} throttled in every minute for 5 minutes. Find the hot key (Contributor Insights) or the capacity limit; see the table's dashboard."
      })
      system_errors = merge(local.per_operation["SystemErrors"], {
        kind        = "system_errors", name = "${var.table_name}-system-errors", metric_name = "SystemErrors", statistic = null, dimensions = {}
        description = "DDB-MON-01: DynamoDB returned 500s for ${var.table_name} in every minute for 5 minutes. Check the AWS Health Dashboard; clients must retry with backoff."
      })
    },
    { for dim in ["read", "write"] : "${dim}_throttle_events" => merge(local.single, {
      kind        = "${dim}_throttle_events", name = "${var.table_name}-${dim}-throttle-events", metric_name = "${title(dim)}ThrottleEvents"
      statistic   = "Sum", dimensions = local.table_dim
      description = "DDB-MON-01: ${dim} throttle events on ${var.table_name} (table) in every minute for 5 minutes: hot partition or capacity limit."
    }) },
    { for pair in setproduct(var.gsi_names, ["read", "write"]) : "gsi_${pair[1]}_throttle_events:${pair[0]}" => merge(local.single, {
      kind        = "gsi_${pair[1]}_throttle_events", name = "${var.table_name}-${pair[0]}-${pair[1]}-throttle-events", metric_name = "${title(pair[1])}ThrottleEvents"
      statistic   = "Sum", dimensions = merge(local.table_dim, { GlobalSecondaryIndexName = pair[0] })
      description = "DDB-MON-01: ${pair[1]} throttle events on ${var.table_name} index ${pair[0]} for 5 minutes. A throttled GSI also throttles writes to the table."
    }) },
    { for t in local.throttle_cause_targets : "${t.cause}_throttle_events:${t.index == "" ? "" : "${t.index}:"}${t.dim}" => merge(local.single, {
      kind        = "${t.cause}_throttle_events"
      name        = "${var.table_name}-${t.index == "" ? "" : "${t.index}-"}${t.dim}-${local.throttle_causes[t.cause].slug}-throttle-events"
      metric_name = "${title(t.dim)}${local.throttle_causes[t.cause].metric}ThrottleEvents"
      statistic   = "Sum", dimensions = t.index == "" ? local.table_dim : merge(local.table_dim, { GlobalSecondaryIndexName = t.index })
      description = "DDB-MON-01${t.cause == "max_on_demand" ? ", DDB-CAP-04" : ""}: ${t.dim}s to ${var.table_name}${t.index == "" ? " (table)" : " index ${t.index}"} throttled in every minute for 5 minutes by ${local.throttle_causes[t.cause].why}"
    }) },
    { for op, ms in var.latency_thresholds_ms : "latency:${op}" => merge(local.single, {
      kind        = "latency", name = "${var.table_name}-latency-${lower(op)}", metric_name = "SuccessfulRequestLatency"
      statistic   = "Average", dimensions = merge(local.table_dim, { Operation = op }), threshold = ms
      description = "DDB-MON-01: average ${op} latency on ${var.table_name} above ${ms} ms for 10 minutes."
    }) },
    { for dim in(var.billing_mode == "PROVISIONED" ? ["Read", "Write"] : []) : "consumed_${lower(dim)}_capacity" => merge(local.capacity_math[dim], {
      kind        = "consumed_${lower(dim)}_capacity", name = "${var.table_name}-consumed-${lower(dim)}-capacity", metric_name = "Consumed${dim}CapacityUnits"
      statistic   = null, dimensions = {}
      description = "DDB-MON-01, DDB-CAP-01: ${var.table_name} uses over 80% of its provisioned ${lower(dim)} capacity for 10 minutes: auto scaling is at its maximum or too slow."
    }) },
    { for r in var.replica_regions : "replication_latency:${r}" => merge(local.single, {
      kind        = "replication_latency", name = "${var.table_name}-replication-latency-${r}", metric_name = "ReplicationLatency"
      statistic   = "Average", dimensions = merge(local.table_dim, { ReceivingRegion = r })
      description = "DDB-MON-01, DDB-DR-01: replication of ${var.table_name} to ${r} is behind for 10 minutes (normally 0.5 to 2.5 s): the RPO of a failover grows."
    }) },
  )

  alarms = { for key, a in local.table_alarms : key => merge(a, {
    threshold           = try(a.threshold, null) != null && try(var.alarms[a.kind].threshold, null) == null ? a.threshold : local.settings[a.kind].threshold
    period              = local.settings[a.kind].period
    evaluation_periods  = local.settings[a.kind].evaluation_periods
    datapoints_to_alarm = local.settings[a.kind].datapoints_to_alarm
    treat_missing_data  = local.settings[a.kind].treat_missing_data
  }) if local.settings[a.kind].enabled }
}

# The topic the module creates is encrypted at rest (DDB-SEC-04) with a
# customer managed key that CloudWatch may use for this account's alarms
# (modules/alarm-topic: alias/aws/sns cannot be used), or with a key of
# your own (sns_kms_master_key_id).
module "topic" {
  source = "../alarm-topic"
  count  = var.create_sns_topic ? 1 : 0

  name        = "${var.table_name}-alarms"
  account_id  = var.account_id
  kms_key_arn = var.sns_kms_master_key_id
  tags        = var.tags
}

moved {
  from = aws_sns_topic.this[0]
  to   = module.topic[0].aws_sns_topic.this
}

# The account-level alarms (no table dimension), for one table per account
# and region. modules/dynamodb-stack calls modules/account on its own
# instead, so that adding a table never moves them.
module "account" {
  source = "./modules/account"
  count  = var.account_alarms_enabled ? 1 : 0

  name_prefix        = local.account_prefix
  sns_topic_arn      = local.topic_arn
  alarms             = var.alarms
  ok_actions_enabled = var.ok_actions_enabled
  tags               = var.tags
}

# Before v2.0.0 the account-level alarms were aws_cloudwatch_metric_alarm.this instances.
moved {
  from = aws_cloudwatch_metric_alarm.this["user_errors"]
  to   = module.account[0].aws_cloudwatch_metric_alarm.this["user_errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.this["account_read_capacity_utilization"]
  to   = module.account[0].aws_cloudwatch_metric_alarm.this["account_read_capacity_utilization"]
}

moved {
  from = aws_cloudwatch_metric_alarm.this["account_write_capacity_utilization"]
  to   = module.account[0].aws_cloudwatch_metric_alarm.this["account_write_capacity_utilization"]
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

  # A single metric ...
  namespace   = each.value.expression == null ? "AWS/DynamoDB" : null
  metric_name = each.value.expression == null ? each.value.metric_name : null
  statistic   = each.value.expression == null ? each.value.statistic : null
  period      = each.value.expression == null ? each.value.period : null
  dimensions  = each.value.expression == null ? each.value.dimensions : null

  # ... or metric math over several.
  dynamic "metric_query" {
    for_each = each.value.expression == null ? [] : [each.value.expression]
    content {
      id          = "e1"
      expression  = metric_query.value
      label       = each.value.metric_name
      return_data = true
    }
  }
  dynamic "metric_query" {
    for_each = each.value.expression == null ? [] : each.value.metrics
    content {
      id = metric_query.value.id
      metric {
        namespace   = "AWS/DynamoDB"
        metric_name = metric_query.value.metric_name
        stat        = metric_query.value.stat
        period      = each.value.period
        dimensions  = metric_query.value.dimensions
      }
    }
  }

  alarm_actions = [local.topic_arn]
  ok_actions    = var.ok_actions_enabled ? [local.topic_arn] : []

  tags = var.tags
}
