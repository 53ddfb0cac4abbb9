provider "aws" {
  region = var.primary_region
}

provider "aws" {
  alias  = "secondary"
  region = var.secondary_region
}

# A zone for the failover record; in a real account, pass your own zone.
resource "aws_route53_zone" "this" {
  count = var.route53_enabled ? 1 : 0

  name          = "${var.env}.dr.example.internal"
  force_destroy = true
}

# The pointer, the failover role, Route 53 failover records and the backup
# path for a pair of regions (DDB-DR-01).
module "dr" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  providers = {
    aws           = aws
    aws.secondary = aws.secondary
  }

  env        = var.env
  account_id = var.account_id
  tables     = var.global_tables

  failover_role = {
    trusted_principal_arns = var.trusted_principal_arns != null ? var.trusted_principal_arns : ["arn:aws:iam::${var.account_id}:root"]
  }

  route53 = var.route53_enabled ? {
    zone_id            = aws_route53_zone.this[0].zone_id
    record_name        = "api.${var.env}.dr.example.internal"
    primary_endpoint   = "api.${var.primary_region}.example.com"
    secondary_endpoint = "api.${var.secondary_region}.example.com"
  } : null

  # The pause-replication drill's FIS template (dynops dr drill --pause-replication); AWS only.
  fis_pause_replication = { enabled = var.fis_pause_replication_enabled }

  backup = {
    enabled              = length(var.regional_tables) > 0 || var.backup_global_tables
    tables               = var.regional_tables
    global_tables        = var.backup_global_tables ? var.global_tables : []
    schedule             = var.backup_schedule
    selection_enabled    = var.backup_selection_enabled
    copy_to_other_region = var.backup_copy_to_other_region
    vault_lock           = var.backup_vault_lock
  }
}
