output "table_name" {
  description = "Table name."
  value       = module.table.table_name
}

output "table_arn" {
  description = "Table ARN."
  value       = module.table.table_arn
}

output "stream_arn" {
  description = "Stream ARN."
  value       = module.table.stream_arn
}

output "gsi_arns" {
  description = "GSI ARNs by name."
  value       = module.table.gsi_arns
}

output "exceptions" {
  description = "Guideline exceptions taken."
  value       = module.table.exceptions
}

output "dashboard_name" {
  description = "The table's CloudWatch dashboard (DDB-MON-01)."
  value       = module.alarms.dashboard_name
}
