output "arn" {
  description = "ARN of the replica (the table's ARN in the replica's region)."
  value       = aws_dynamodb_table_replica.this.arn
}

output "region" {
  description = "Region of the replica."
  value       = data.aws_region.this.name
}

output "stream_arn" {
  description = "Latest stream ARN of the replica, for consumers in its region."
  value       = data.aws_dynamodb_table.replica.stream_arn
}

output "stream_view_type" {
  description = "View type of the replica's stream: the table's, which global tables replicate through (NEW_AND_OLD_IMAGES, checked at plan, DDB-DR-01)."
  value       = var.table_stream_view_type
}

output "deletion_protection_enabled" {
  description = "Deletion protection of the replica as applied (DDB-PROT-01)."
  value       = aws_dynamodb_table_replica.this.deletion_protection_enabled
}

output "exceptions" {
  description = "The replica's own guideline exceptions: rule ID to reason."
  value       = local.exceptions
}
