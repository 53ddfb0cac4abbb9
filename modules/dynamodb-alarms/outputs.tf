output "alarm_names" {
  description = "Names of every alarm, by key (`throttled_requests`, `gsi_read_throttle_events:gsi1`, `latency:GetItem`, ...)."
  value       = merge({ for k, a in aws_cloudwatch_metric_alarm.this : k => a.alarm_name }, try(module.account[0].alarm_names, {}))
}

output "alarm_arns" {
  description = "ARNs of every alarm, by key."
  value       = merge({ for k, a in aws_cloudwatch_metric_alarm.this : k => a.arn }, try(module.account[0].alarm_arns, {}))
}

output "dashboard_name" {
  description = "Name of the table's CloudWatch dashboard (the table name), or null when dashboard_enabled = false."
  value       = var.dashboard_enabled ? aws_cloudwatch_dashboard.this[0].dashboard_name : null
}

output "sns_topic_arn" {
  description = "SNS topic that receives the alarm and OK notifications (created or passed in)."
  value       = local.topic_arn
}
