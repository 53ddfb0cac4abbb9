provider "aws" {
  region = "eu-west-1"
}

provider "aws" {
  alias  = "eu_central_1"
  region = "eu-central-1"
}

provider "aws" {
  alias  = "us_west_2"
  region = "us-west-2"
}

# A global table (DDB-DR-01 pattern 4): replicas in two more regions, each a
# modules/dynamodb-table-replica call with that region's provider, so each gets
# deletion protection (DDB-PROT-01) and PITR for 35 days (DDB-PITR-01). The
# stream (NEW_AND_OLD_IMAGES) is what replication uses.
# The local emulator cannot create replicas: this example applies only on AWS.
module "table" {
  source = "../.."

  env     = var.env
  product = var.product
  usage   = "session"

  hash_key = "session_id"
  attributes = [
    { name = "session_id", type = "S" },
  ]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled
}

module "replica_eu_central_1" {
  source    = "../../../dynamodb-table-replica"
  providers = { aws = aws.eu_central_1 }

  table_name             = module.table.table_name
  global_table_arn       = module.table.table_arn
  point_in_time_recovery = module.table.point_in_time_recovery
  table_tags             = module.table.tags
  table_stream_view_type = module.table.stream_view_type

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
}

module "replica_us_west_2" {
  source    = "../../../dynamodb-table-replica"
  providers = { aws = aws.us_west_2 }

  table_name             = module.table.table_name
  global_table_arn       = module.table.table_arn
  point_in_time_recovery = module.table.point_in_time_recovery
  table_tags             = module.table.tags
  table_stream_view_type = module.table.stream_view_type

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason

  # Replicas are created one at a time (AWS refuses concurrent replica updates).
  depends_on = [module.replica_eu_central_1]
}
