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

output "alarms" {
  description = "Per table usage: alarm names and dashboard name (DDB-MON-01)."
  value       = module.stack.alarms
}

output "stream_consumers" {
  description = "Per table usage: stream consumer function, mapping, DLQ and alarms (DDB-STREAM-04/05)."
  value       = module.stack.stream_consumers
}
