output "table_name" {
  description = "Table name."
  value       = module.table.table_name
}

output "alarm_names" {
  description = "Alarm names by key."
  value       = module.alarms.alarm_names
}

output "dashboard_name" {
  description = "The table's dashboard."
  value       = module.alarms.dashboard_name
}

output "sns_topic_arn" {
  description = "Topic the alarms notify."
  value       = module.alarms.sns_topic_arn
}
