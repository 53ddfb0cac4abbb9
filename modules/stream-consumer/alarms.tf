# Alarms of the consumer (DDB-STREAM-05), each notifying the topic on ALARM and OK.
locals {
  alarms = {
    iterator_age_warning = {
      namespace = "AWS/Lambda", metric_name = "IteratorAge", dimensions = { FunctionName = local.function_name }
      statistic = "Maximum", threshold = var.iterator_age_warning_ms, period = 60, evaluation_periods = 5
      # No invocations (nothing to read) means no data: the consumer is not behind.
      treat_missing_data = "notBreaching"
      description        = "DDB-STREAM-05 warning: ${local.function_name} is over ${var.iterator_age_warning_ms / 1000} s behind its stream for 5 minutes (retries or throttling). See the table's dashboard."
    }
    iterator_age_critical = {
      namespace          = "AWS/Lambda", metric_name = "IteratorAge", dimensions = { FunctionName = local.function_name }
      statistic          = "Maximum", threshold = var.iterator_age_critical_ms, period = 60, evaluation_periods = 3
      treat_missing_data = "notBreaching"
      description        = "DDB-STREAM-05 critical: ${local.function_name} is over ${var.iterator_age_critical_ms / 60000} min behind; at ${var.maximum_record_age_in_seconds / 60} min records go to the DLQ, at 24 h the stream drops them."
    }
    errors = {
      namespace = "AWS/Lambda", metric_name = "Errors", dimensions = { FunctionName = local.function_name }
      statistic = "Sum", threshold = 0, period = 60, evaluation_periods = 5, datapoints_to_alarm = 3
      # Errors are published per invocation; none means none failed.
      treat_missing_data = "notBreaching"
      description        = "DDB-STREAM-05: ${local.function_name} failed (crash, timeout, returned error) in 3 of 5 minutes. Records it reports as batch item failures are not counted here: watch the DLQ."
    }
    dlq_visible = {
      namespace = "AWS/SQS", metric_name = "ApproximateNumberOfMessagesVisible", dimensions = { QueueName = aws_sqs_queue.dlq.name }
      statistic = "Maximum", threshold = 0, period = 60, evaluation_periods = 1
      # SQS stops publishing for an empty idle queue: missing data is an empty DLQ.
      treat_missing_data = "notBreaching"
      description        = "DDB-STREAM-05: records of ${local.function_name} failed and are in ${aws_sqs_queue.dlq.name}. Runbook: runbooks/dlq-redrive.md (dynops dlq redrive)."
    }
    dlq_oldest_message = {
      namespace          = "AWS/SQS", metric_name = "ApproximateAgeOfOldestMessage", dimensions = { QueueName = aws_sqs_queue.dlq.name }
      statistic          = "Maximum", threshold = var.dlq_oldest_message_age_seconds, period = 300, evaluation_periods = 1
      treat_missing_data = "notBreaching"
      description        = "DDB-STREAM-05: a message has waited over ${var.dlq_oldest_message_age_seconds / 3600} h in ${aws_sqs_queue.dlq.name}; SQS deletes it at ${var.dlq_message_retention_seconds / 86400} days. Redrive now."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.alarms

  alarm_name          = "${var.name}-${replace(each.key, "_", "-")}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric_name
  dimensions          = each.value.dimensions
  statistic           = each.value.statistic
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  period              = each.value.period
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = try(each.value.datapoints_to_alarm, each.value.evaluation_periods)
  treat_missing_data  = each.value.treat_missing_data

  alarm_actions = [var.alarm_sns_topic_arn]
  ok_actions    = [var.alarm_sns_topic_arn]

  tags = var.tags
}
