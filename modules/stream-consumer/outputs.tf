output "function_name" {
  description = "Name of the consumer function."
  value       = local.function_name
}

output "function_arn" {
  description = "ARN of the consumer function."
  value       = local.function_arn
}

output "event_source_mapping_uuid" {
  description = "UUID of the event source mapping (for `aws lambda get-event-source-mapping`)."
  value       = aws_lambda_event_source_mapping.this.uuid
}

output "dlq_name" {
  description = "Name of the on-failure SQS queue (the DLQ)."
  value       = aws_sqs_queue.dlq.name
}

output "dlq_arn" {
  description = "ARN of the DLQ."
  value       = aws_sqs_queue.dlq.arn
}

output "dlq_url" {
  description = "URL of the DLQ (for `dynops dlq redrive`)."
  value       = aws_sqs_queue.dlq.url
}

output "role_name" {
  description = "Execution role that holds the consumer permissions."
  value       = local.role_name
}

output "alarm_names" {
  description = "Alarm names by key (iterator_age_warning, iterator_age_critical, errors, dlq_visible, dlq_oldest_message)."
  value       = { for k, a in aws_cloudwatch_metric_alarm.this : k => a.alarm_name }
}
