# DR on the local emulator: a second region (eu-central-1) on the same
# emulator. moto has no global tables, so each global table of
# envs/tables.yaml gets a same-name table in the second region (a stand-in
# for the replica), and modules/dr puts the pointer in both regions;
# `make demo` drills a failover and failback on that pair.
provider "aws" {
  alias  = "secondary"
  region = var.secondary_region

  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  max_retries                 = 3
}

locals {
  dr_tables = { for usage, t in yamldecode(file("${path.module}/../tables.yaml")) : usage => t if length(try(t.replica_regions, [])) > 0 }
}

module "replica_standin" {
  source   = "../../modules/dynamodb-table"
  for_each = local.dr_tables

  providers = {
    aws = aws.secondary
  }

  env     = "local"
  product = "hoge"
  usage   = each.key

  hash_key                 = each.value.hash_key
  range_key                = try(each.value.range_key, null)
  attributes               = each.value.attributes
  global_secondary_indexes = try(each.value.global_secondary_indexes, [])

  contributor_insights_enabled = false # moto: 500 Not Implemented
}

# Route 53 failover records for the pair; `dynops dr` inverts their health checks.
resource "aws_route53_zone" "dr" {
  name          = "hoge.local.dr.internal"
  force_destroy = true
}

module "dr" {
  source = "../../modules/dr"

  providers = {
    aws           = aws
    aws.secondary = aws.secondary
  }

  env        = "local"
  account_id = local.emulator_account_id
  tables     = module.stack.global_table_names

  failover_role = {
    trusted_principal_arns = ["arn:aws:iam::${local.emulator_account_id}:root"]
  }

  route53 = {
    zone_id            = aws_route53_zone.dr.zone_id
    record_name        = "api.hoge.local.dr.internal"
    primary_endpoint   = "api.${var.region}.hoge.example.com"
    secondary_endpoint = "api.${var.secondary_region}.hoge.example.com"
  }

  backup = {
    enabled           = length(module.stack.regional_table_names) > 0
    tables            = module.stack.regional_table_names
    selection_enabled = false # moto: aws_backup_selection answers 500
  }
}
