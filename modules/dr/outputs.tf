output "regions" {
  description = "The pair of regions: primary (the provider `aws`) and secondary (`aws.secondary`)."
  value       = { primary = local.primary, secondary = local.secondary }
}

output "pointer_parameters" {
  description = "Per table, the SSM parameter (in both regions) naming its active region; `dynops dr --pointer` defaults to it."
  value       = local.pointer_names
}

output "failover_role_arn" {
  description = "ARN of the role to assume for `dynops dr`; null when not created."
  value       = try(aws_iam_role.failover[0].arn, null)
}

output "health_check_ids" {
  description = "Route 53 health check per region, for `dynops dr failover --health-check REGION=ID`; empty without route53."
  value       = { for r, hc in aws_route53_health_check.this : r => hc.id }
}

output "backup_plan_id" {
  description = "AWS Backup plan in the primary region (every table there); null when backup is off."
  value       = try(aws_backup_plan.this[0].id, null)
}

output "backup_copy_vault_arn" {
  description = "Vault in the secondary region that holds the copies (runbooks/dr-restore-in-region.md restores from it)."
  value       = try(aws_backup_vault.secondary[0].arn, null)
}

output "backup_replica_plan_id" {
  description = "AWS Backup plan in the secondary region (the global tables' replicas); null when there is none."
  value       = try(aws_backup_plan.secondary[0].id, null)
}

output "fis_pause_replication_template_id" {
  description = "AWS FIS experiment template (in the secondary region) that pauses replication into it: `dynops dr drill --pause-replication ID --to SECONDARY`; give it to modules/dynamodb-access `fis_experiment_template_ids`. null when off."
  value       = try(aws_fis_experiment_template.pause_replication[0].id, null)
}

output "fis_role_arn" {
  description = "The role the FIS experiment runs as (the resource-policy actions on the secondary replicas only); null when off."
  value       = try(aws_iam_role.fis[0].arn, null)
}
