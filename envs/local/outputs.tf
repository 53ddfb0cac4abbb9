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

output "dr" {
  description = "DR pair on the emulator: regions, pointer parameters, failover role."
  value = {
    regions            = module.dr.regions
    pointer_parameters = module.dr.pointer_parameters
    failover_role_arn  = module.dr.failover_role_arn
    health_check_ids   = module.dr.health_check_ids
    stand_in_tables    = [for m in module.replica_standin : m.table_name]
  }
}
