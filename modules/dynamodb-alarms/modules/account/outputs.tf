output "alarm_names" {
  description = "Names of the account-level alarms, by kind."
  value       = { for k, a in aws_cloudwatch_metric_alarm.this : k => a.alarm_name }
}

output "alarm_arns" {
  description = "ARNs of the account-level alarms, by kind."
  value       = { for k, a in aws_cloudwatch_metric_alarm.this : k => a.arn }
}
