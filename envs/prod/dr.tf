# DR for prod (DDB-DR-01): the global tables (replica_regions in
# envs/tables.yaml) get the active-region pointer in both regions and the
# failover role; the others get backups copied to the secondary region.
provider "aws" {
  alias  = "secondary"
  region = var.secondary_region
}

module "dr" {
  source = "../../modules/dr"

  providers = {
    aws           = aws
    aws.secondary = aws.secondary
  }

  env    = "prod"
  tables = module.stack.global_table_names

  failover_role = {
    trusted_principal_arns = var.failover_trusted_principal_arns
  }

  backup = {
    enabled = length(module.stack.regional_table_names) > 0
    tables  = module.stack.regional_table_names
  }
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

variable "secondary_region" {
  description = "DR region: where the global tables' replicas are (replica_regions in envs/tables.yaml) and backups are copied."
  type        = string
  default     = "eu-central-1"
}

variable "failover_trusted_principal_arns" {
  description = "Who may assume the failover role for `dynops dr` (e.g. the on-call SSO role ARN)."
  type        = list(string)
}
