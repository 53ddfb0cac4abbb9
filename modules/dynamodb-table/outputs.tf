output "table_name" {
  description = "Table name, `{env}-{product}-{usage}` (DDB-NAME-01)."
  value       = aws_dynamodb_table.this.name
}

output "table_arn" {
  description = "Table ARN."
  value       = aws_dynamodb_table.this.arn
}

output "table_id" {
  description = "Table ID (the name)."
  value       = aws_dynamodb_table.this.id
}

output "stream_arn" {
  description = "Latest stream ARN; null when streams are off."
  value       = var.stream_enabled ? aws_dynamodb_table.this.stream_arn : null
}

output "stream_view_type" {
  description = "The stream's view type (null when the stream is off): modules/dynamodb-table-replica checks it (DDB-DR-01)."
  value       = aws_dynamodb_table.this.stream_enabled ? aws_dynamodb_table.this.stream_view_type : null
}

output "stream_label" {
  description = "Latest stream label; null when streams are off."
  value       = var.stream_enabled ? aws_dynamodb_table.this.stream_label : null
}

output "gsi_names" {
  description = "GSI names (gsi1, gsi2, ...)."
  value       = [for g in var.global_secondary_indexes : g.name]
}

output "gsi_arns" {
  description = "Map of GSI name to index ARN, for IAM policies."
  value       = { for g in var.global_secondary_indexes : g.name => "${aws_dynamodb_table.this.arn}/index/${g.name}" }
}

output "hash_key" {
  description = "Partition key attribute."
  value       = var.hash_key
}

output "range_key" {
  description = "Sort key attribute, or null."
  value       = var.range_key
}

output "billing_mode" {
  description = "Billing mode (DDB-CAP-01)."
  value       = aws_dynamodb_table.this.billing_mode
}

output "point_in_time_recovery" {
  description = "The table's PITR setting (enabled, recovery_period_in_days), for modules/dynamodb-table-replica."
  value       = var.point_in_time_recovery
}

output "tags" {
  description = "The tags written on the table (standard tags and `dynops:exception:*`), for its replicas."
  value       = local.tags
}

output "key_schema" {
  description = "The key schema recorded in the `dynops:key-schema` tag: hash and range key and every LSI's sort key (DDB-IDX-01)."
  value       = local.key_schema
}

output "autoscaling_resource_ids" {
  description = "Application Auto Scaling targets, key (table-read, gsi1-write, ...) to `resource_id|scalable_dimension` (empty without auto scaling)."
  value       = { for k, t in local.autoscaling_targets : k => "${t.resource_id}|${t.dimension}" }
}

output "on_demand_capped" {
  description = "The table is on-demand with a maximum for reads and writes (DDB-CAP-04's cost ceiling): turn on the alarms that say when it bites (throttle_cause_alarms.max_on_demand of modules/dynamodb-alarms)."
  value       = local.cost_ceiling
}

output "exceptions" {
  description = "Guideline exceptions taken by this table: rule ID to reason. Also written as `dynops:exception:<RULE>` tags."
  value       = local.exceptions
}
