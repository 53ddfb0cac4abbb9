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

output "replicas" {
  description = "Per table usage: the replica's ARN, region, stream ARN and deletion protection (DDB-DR-01, DDB-PROT-01)."

  precondition {
    condition     = alltrue([for usage, r in module.stack.replicas : r.regions == [var.secondary_region]])
    error_message = "DDB-DR-01: envs/tables.yaml: replica_regions of ${join(", ", keys(module.stack.replicas))} must be [${var.secondary_region}] (the secondary region this root has a provider for); add a provider and a module call per extra region."
  }
  value = { for usage, r in module.replica : usage => {
    arn                         = r.arn
    region                      = r.region
    stream_arn                  = r.stream_arn
    deletion_protection_enabled = r.deletion_protection_enabled
  } }
}

output "readiness" {
  description = "The readiness run's function, schedule and alarms (null when var.readiness is null)."
  value       = one(module.readiness[*])
}
