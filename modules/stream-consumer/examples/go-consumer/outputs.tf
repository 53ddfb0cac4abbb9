output "table_name" {
  description = "The consumed table."
  value       = module.table.table_name
}

output "stream_arn" {
  description = "The consumed stream."
  value       = module.table.stream_arn
}

output "processed_table_name" {
  description = "The idempotency table of the handler."
  value       = module.processed.table_name
}

output "function_name" {
  description = "The consumer function."
  value       = module.consumer.function_name
}

output "event_source_mapping_uuid" {
  description = "The event source mapping."
  value       = module.consumer.event_source_mapping_uuid
}

output "dlq_name" {
  description = "The DLQ."
  value       = module.consumer.dlq_name
}

output "dlq_url" {
  description = "The DLQ URL."
  value       = module.consumer.dlq_url
}

output "alarm_names" {
  description = "The consumer's alarms."
  value       = module.consumer.alarm_names
}

output "topic_arn" {
  description = "The alarm topic."
  value       = module.alarm_topic.topic_arn
}
