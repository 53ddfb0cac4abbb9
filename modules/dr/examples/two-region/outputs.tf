output "pointer_parameters" {
  description = "Pointer parameter per table."
  value       = module.dr.pointer_parameters
}

output "failover_role_arn" {
  description = "Role for dynops dr."
  value       = module.dr.failover_role_arn
}

output "health_check_ids" {
  description = "Health check per region."
  value       = module.dr.health_check_ids
}

output "backup_plan_id" {
  description = "Backup plan of the regional tables."
  value       = module.dr.backup_plan_id
}

output "backup_copy_vault_arn" {
  description = "Copy vault in the secondary region."
  value       = module.dr.backup_copy_vault_arn
}

output "fis_pause_replication_template_id" {
  description = "The FIS template of `dynops dr drill --pause-replication`; null when off."
  value       = module.dr.fis_pause_replication_template_id
}
