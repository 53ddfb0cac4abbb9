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
