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

output "global_table_names" {
  description = "Tables with replica_regions: global tables (DDB-DR-01 pattern 4), for modules/dr `tables`."
  value       = [for usage, t in module.table : t.table_name if length(var.tables[usage].replica_regions) > 0]
}

output "regional_table_names" {
  description = "Tables without replica_regions, for modules/dr `backup.tables` (DDB-DR-01 pattern 1)."
  value       = [for usage, t in module.table : t.table_name if length(var.tables[usage].replica_regions) == 0]
}
