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
