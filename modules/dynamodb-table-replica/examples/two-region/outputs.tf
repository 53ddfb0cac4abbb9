output "table_arn" {
  description = "ARN of the table."
  value       = module.table.table_arn
}

output "replica_arn" {
  description = "ARN of the replica."
  value       = module.replica.arn
}

output "replica_region" {
  description = "Region of the replica."
  value       = module.replica.region
}

output "replica_stream_arn" {
  description = "Stream ARN of the replica."
  value       = module.replica.stream_arn
}

output "replica_deletion_protection_enabled" {
  description = "Whether the replica has deletion protection (read back from the provider)."
  value       = module.replica.deletion_protection_enabled
}
