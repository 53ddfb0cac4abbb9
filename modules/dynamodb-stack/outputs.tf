output "tables" {
  description = "Per usage: table name, ARN, stream ARN, GSI ARNs and exceptions taken."
  value = { for usage, t in module.table : usage => {
    name       = t.table_name
    arn        = t.table_arn
    stream_arn = t.stream_arn
    gsi_arns   = t.gsi_arns
    hash_key   = t.hash_key
    range_key  = t.range_key
    exceptions = t.exceptions
  } }
}

output "table_names" {
  description = "Table names, for `dynops check --table`."
  value       = [for t in module.table : t.table_name]
}

output "access" {
  description = "IAM policy ARNs and documents, and role ARNs, per role (null when access is off)."
  value = var.access == null ? null : {
    policy_arns      = module.access[0].policy_arns
    policy_documents = module.access[0].policy_documents
    role_arns        = module.access[0].role_arns
  }
}

output "export_bucket" {
  description = "The export bucket, for `dynops export --bucket`; null when export_enabled is false."
  value       = var.export_enabled ? module.export[0].bucket_name : null
}

output "export_checkpoint_table" {
  description = "The export series checkpoint table; null without a schedule."
  value       = var.export_enabled ? module.export[0].checkpoint_table_name : null
}

output "global_table_names" {
  description = "Tables with replica_regions: global tables (DDB-DR-01 pattern 4), for modules/dr `tables`."
  value       = [for usage, t in module.table : t.table_name if length(try(local.tables[usage].replica_regions, [])) > 0]
}

output "regional_table_names" {
  description = "Tables without replica_regions, for modules/dr `backup.tables` (DDB-DR-01 pattern 1)."
  value       = [for usage, t in module.table : t.table_name if length(try(local.tables[usage].replica_regions, [])) == 0]
}

output "alarms" {
  description = "Per usage: the table's alarm names (by key) and its dashboard name (DDB-MON-01)."
  value = { for usage, a in module.alarms : usage => {
    alarm_names    = a.alarm_names
    dashboard_name = a.dashboard_name
  } }
}

output "alarm_topic_arn" {
  description = "SNS topic every alarm of the stack notifies."
  value       = local.alarm_topic_arn
}

output "stream_consumers" {
  description = "Per usage: the stream consumer's function, event source mapping, DLQ and alarms (DDB-STREAM-04/05)."
  value = { for usage, c in module.consumer : usage => {
    function_name             = c.function_name
    event_source_mapping_uuid = c.event_source_mapping_uuid
    dlq_name                  = c.dlq_name
    dlq_url                   = c.dlq_url
    alarm_names               = c.alarm_names
  } }
}

output "stream_processed_table" {
  description = "The consumers' idempotency table, or null without consumers."
  value       = length(module.processed) > 0 ? module.processed[0].table_name : null
}

output "replicas" {
  description = <<-EOT
    Per usage with replica_regions: what modules/dynamodb-table-replica needs (table_name, global_table_arn,
    point_in_time_recovery, table_tags, table_stream_view_type) and the regions. The env root creates one replica per region with that
    region's provider (DDB-DR-01, DDB-PROT-01).
  EOT
  value = { for usage, t in module.table : usage => {
    regions                = try(local.tables[usage].replica_regions, [])
    table_name             = t.table_name
    global_table_arn       = t.table_arn
    point_in_time_recovery = t.point_in_time_recovery
    table_tags             = t.tags
    table_stream_view_type = t.stream_view_type
  } if length(try(local.tables[usage].replica_regions, [])) > 0 }
}
