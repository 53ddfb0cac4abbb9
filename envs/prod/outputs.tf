output "tables" {
  description = "The environment's tables: name, ARN, stream ARN, GSI ARNs, exceptions."
  value       = module.stack.tables
}

output "table_names" {
  description = "Table names, for `dynops check --table`."
  value       = module.stack.table_names
}

output "dr" {
  description = "DR building blocks: pointer parameters, failover role, backup plan."
  value = {
    pointer_parameters    = module.dr.pointer_parameters
    failover_role_arn     = module.dr.failover_role_arn
    backup_plan_id        = module.dr.backup_plan_id
    backup_copy_vault_arn = module.dr.backup_copy_vault_arn
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
