# DR building blocks for one environment's tables across a pair of regions
# (DDB-DR-01): the active-region pointer applications read (here), the
# failover role (iam.tf), Route 53 failover records (route53.tf) and, for the
# tables that are not global, backups copied to the other region (backup.tf).

data "aws_region" "primary" {}

data "aws_region" "secondary" {
  provider = aws.secondary
}

data "aws_partition" "this" {}

locals {
  primary   = data.aws_region.primary.name
  secondary = data.aws_region.secondary.name
  account   = var.account_id
  partition = data.aws_partition.this.partition

  pointer_names       = { for t in var.tables : t => "${var.pointer_prefix}/${t}/active-region" }
  pointer_description = { for t in var.tables : t => "Active region of ${t}: applications send writes there. Changed only by dynops dr failover/failback." }

  tags = merge(var.tags, { env = var.env, "managed-by" = "terraform" })
}

# The pointer exists in both regions so that an application reads its own
# region's copy, also when the other region is down. Terraform sets the
# primary region once; `dynops dr failover` flips it, and Terraform must not
# flip it back: the value is ignored after creation.
resource "aws_ssm_parameter" "primary" {
  for_each = local.pointer_names

  name        = each.value
  description = local.pointer_description[each.key]
  type        = "String"
  value       = local.primary
  tags        = local.tags

  lifecycle {
    ignore_changes = [value]
  }
}

resource "aws_ssm_parameter" "secondary" {
  for_each = local.pointer_names
  provider = aws.secondary

  name        = each.value
  description = local.pointer_description[each.key]
  type        = "String"
  value       = local.primary
  tags        = local.tags

  lifecycle {
    ignore_changes = [value]
  }
}
