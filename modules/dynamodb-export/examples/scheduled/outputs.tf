output "bucket_name" {
  description = "The export bucket."
  value       = module.export.bucket_name
}

output "checkpoint_table_name" {
  description = "The series checkpoint table."
  value       = module.export.checkpoint_table_name
}
