# DR for prod (DDB-DR-01): the global tables (replica_regions in
# envs/tables.yaml) get the active-region pointer in both regions and the
# failover role; every table (and replica) is backed up, copied to the other region.
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

  env        = "prod"
  account_id = var.account_id
  tables     = module.stack.global_table_names

  failover_role = {
    trusted_principal_arns = var.failover_trusted_principal_arns
  }

  backup = {
    enabled       = length(module.stack.regional_table_names) + length(module.stack.global_table_names) > 0
    tables        = module.stack.regional_table_names
    global_tables = module.stack.global_table_names
  }
}
