# One dashboard per table, named like the table: the graphs the on-call
# engineer opens at 3 a.m. (throttles, errors, latency, capacity, replication,
# stream consumers, DLQ depth) and the table's alarms.

locals {
  # SEARCH sums a per-operation metric over every operation the table served.
  per_operation_search = { for metric in ["ThrottledRequests", "SystemErrors"] : metric =>
    "SUM(SEARCH('{AWS/DynamoDB,Operation,TableName} MetricName=\"${metric}\" TableName=\"${var.table_name}\"', 'Sum', 60))"
  }

  widgets = concat(
    [
      {
        title = "Throttles (requests and events, table and GSIs)"
        metrics = concat(
          [
            [{ expression = local.per_operation_search["ThrottledRequests"], label = "ThrottledRequests (all operations)", id = "throttled" }],
            ["AWS/DynamoDB", "ReadThrottleEvents", "TableName", var.table_name, { stat = "Sum" }],
            ["AWS/DynamoDB", "WriteThrottleEvents", "TableName", var.table_name, { stat = "Sum" }],
          ],
          flatten([for g in var.gsi_names : [
            ["AWS/DynamoDB", "ReadThrottleEvents", "TableName", var.table_name, "GlobalSecondaryIndexName", g, { stat = "Sum", label = "${g} ReadThrottleEvents" }],
            ["AWS/DynamoDB", "WriteThrottleEvents", "TableName", var.table_name, "GlobalSecondaryIndexName", g, { stat = "Sum", label = "${g} WriteThrottleEvents" }],
          ]]),
        )
      },
      {
        title = "Errors"
        metrics = [
          [{ expression = local.per_operation_search["SystemErrors"], label = "SystemErrors (all operations)", id = "system" }],
          ["AWS/DynamoDB", "UserErrors", { stat = "Sum", label = "UserErrors (account, region)" }],
        ]
      },
      {
        title   = "Latency (average, ms)"
        metrics = [for op in keys(var.latency_thresholds_ms) : ["AWS/DynamoDB", "SuccessfulRequestLatency", "TableName", var.table_name, "Operation", op, { stat = "Average" }]]
      },
      {
        title = "Consumed capacity (units per minute)"
        metrics = [
          ["AWS/DynamoDB", "ConsumedReadCapacityUnits", "TableName", var.table_name, { stat = "Sum" }],
          ["AWS/DynamoDB", "ConsumedWriteCapacityUnits", "TableName", var.table_name, { stat = "Sum" }],
        ]
      },
    ],
    [for _ in(length(var.replica_regions) == 0 ? [] : [1]) : {
      title   = "Replication latency (ms)"
      metrics = [for r in var.replica_regions : ["AWS/DynamoDB", "ReplicationLatency", "TableName", var.table_name, "ReceivingRegion", r, { stat = "Average" }]]
    }],
    [for _ in(length(var.stream_consumers) == 0 ? [] : [1]) : {
      title   = "Stream consumer iterator age (ms; records are lost at 24 h)"
      metrics = [for c in var.stream_consumers : ["AWS/Lambda", "IteratorAge", "FunctionName", c.function_name, { stat = "Maximum" }]]
    }],
    [for _ in(length(var.stream_consumers) == 0 ? [] : [1]) : {
      title = "Consumer DLQ depth (messages) and oldest message (s)"
      metrics = flatten([for c in var.stream_consumers : [
        ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", c.dlq_name, { stat = "Maximum" }],
        ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", c.dlq_name, { stat = "Maximum", yAxis = "right" }],
      ]])
    }],
  )

  dashboard = {
    widgets = concat(
      [{
        type = "alarm", x = 0, y = 0, width = 24, height = 4
        properties = {
          title  = "Alarms of ${var.table_name}"
          alarms = sort(concat([for a in aws_cloudwatch_metric_alarm.this : a.arn], values(try(module.account[0].alarm_arns, {}))))
        }
      }],
      [for i, w in local.widgets : {
        type = "metric", x = (i % 2) * 12, y = 4 + floor(i / 2) * 6, width = 12, height = 6
        properties = {
          title   = w.title
          region  = local.region
          metrics = w.metrics
          view    = "timeSeries"
          stacked = false
          period  = 60
        }
      }],
    )
  }
}

resource "aws_cloudwatch_dashboard" "this" {
  count = var.dashboard_enabled ? 1 : 0

  dashboard_name = var.table_name
  dashboard_body = jsonencode(local.dashboard)
}
