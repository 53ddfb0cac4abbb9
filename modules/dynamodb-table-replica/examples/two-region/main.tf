provider "aws" {
  region = var.region
}

provider "aws" {
  alias  = "replica"
  region = var.replica_region
}

# A table in var.region and its one replica in var.replica_region (DDB-DR-01
# pattern 4): the replica is this module called with the replica region's
# provider, so it keeps deletion protection (DDB-PROT-01), the table's PITR
# (DDB-PITR-01) and tags. The local emulator cannot create replicas: this
# example applies only on AWS (it plans offline).
module "table" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "session"

  hash_key = "session_id"
  attributes = [
    { name = "session_id", type = "S" },
  ]

  point_in_time_recovery        = var.point_in_time_recovery
  point_in_time_recovery_reason = var.point_in_time_recovery_reason

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
}

module "replica" {
  source    = "../.."
  providers = { aws = aws.replica }

  table_name             = module.table.table_name
  global_table_arn       = module.table.table_arn
  point_in_time_recovery = module.table.point_in_time_recovery
  table_tags             = module.table.tags
  table_stream_view_type = module.table.stream_view_type

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
}
