output "tables" {
  description = "The environment's tables: name, ARN, stream ARN, GSI ARNs, exceptions."
  value       = module.stack.tables
}

output "table_names" {
  description = "Table names, for `dynops check --table`."
  value       = module.stack.table_names
}

output "export_bucket" {
  description = "The export bucket, for `dynops export --bucket`."
  value       = module.stack.export_bucket
}
