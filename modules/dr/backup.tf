# Every table is in a backup plan (Security Hub DynamoDB.4, in every region):
# the tables that are not global (DDB-DR-01 pattern 1) and the global tables
# in the primary region, by the primary plan; the global tables' replicas in
# the secondary region, by a plan there. Each plan copies its recovery points
# to the other region's vault (copy_to_other_region), from which
# runbooks/dr-restore-in-region.md restores; vault_lock locks both vaults.
# Cross-region copy of DynamoDB backups needs AWS Backup's advanced features
# for DynamoDB turned on in the account (an account-wide setting this module
# does not manage).

locals {
  backup_table_arns   = [for t in concat(var.backup.tables, var.backup.global_tables) : "arn:${local.partition}:dynamodb:${local.primary}:${local.account}:table/${t}"]
  backup_replica_arns = [for t in var.backup.global_tables : "arn:${local.partition}:dynamodb:${local.secondary}:${local.account}:table/${t}"]
  backup_secondary    = var.backup.enabled && length(var.backup.global_tables) > 0
}

resource "aws_backup_vault" "primary" {
  count = var.backup.enabled ? 1 : 0

  name = "${var.env}-dynamodb"
  tags = local.tags
}

resource "aws_backup_vault" "secondary" {
  count    = var.backup.enabled ? 1 : 0
  provider = aws.secondary

  name = "${var.env}-dynamodb-copy"
  tags = local.tags
}

resource "aws_backup_plan" "this" {
  count = var.backup.enabled ? 1 : 0

  name = "${var.env}-dynamodb-cross-region"

  rule {
    rule_name         = "daily-with-copy-to-${local.secondary}"
    target_vault_name = aws_backup_vault.primary[0].name
    schedule          = var.backup.schedule

    lifecycle {
      delete_after = var.backup.retention_days
    }

    dynamic "copy_action" {
      for_each = var.backup.copy_to_other_region ? [1] : []
      content {
        destination_vault_arn = aws_backup_vault.secondary[0].arn
        lifecycle {
          delete_after = var.backup.copy_retention_days
        }
      }
    }
  }

  tags = local.tags
}

# The replicas of the global tables in the secondary region: their own plan
# there, copying to the primary region's vault.
resource "aws_backup_plan" "secondary" {
  count    = local.backup_secondary ? 1 : 0
  provider = aws.secondary

  name = "${var.env}-dynamodb-replicas"

  rule {
    rule_name         = "daily-with-copy-to-${local.primary}"
    target_vault_name = aws_backup_vault.secondary[0].name
    schedule          = var.backup.schedule

    lifecycle {
      delete_after = var.backup.retention_days
    }

    dynamic "copy_action" {
      for_each = var.backup.copy_to_other_region ? [1] : []
      content {
        destination_vault_arn = aws_backup_vault.primary[0].arn
        lifecycle {
          delete_after = var.backup.copy_retention_days
        }
      }
    }
  }

  tags = local.tags
}

resource "aws_backup_selection" "secondary" {
  count    = local.backup_secondary && var.backup.selection_enabled ? 1 : 0
  provider = aws.secondary

  name         = "${var.env}-dynamodb-replicas"
  plan_id      = aws_backup_plan.secondary[0].id
  iam_role_arn = aws_iam_role.backup[0].arn
  resources    = local.backup_replica_arns
}

# Vault lock (optional): recovery points cannot be deleted before
# min_retention_days, nor kept past max_retention_days; after
# changeable_for_days the lock itself cannot be removed (compliance mode).
resource "aws_backup_vault_lock_configuration" "primary" {
  count = var.backup.enabled && var.backup.vault_lock != null ? 1 : 0

  backup_vault_name   = aws_backup_vault.primary[0].name
  min_retention_days  = var.backup.vault_lock.min_retention_days
  max_retention_days  = var.backup.vault_lock.max_retention_days
  changeable_for_days = var.backup.vault_lock.changeable_for_days
}

resource "aws_backup_vault_lock_configuration" "secondary" {
  count    = var.backup.enabled && var.backup.vault_lock != null ? 1 : 0
  provider = aws.secondary

  backup_vault_name   = aws_backup_vault.secondary[0].name
  min_retention_days  = var.backup.vault_lock.min_retention_days
  max_retention_days  = var.backup.vault_lock.max_retention_days
  changeable_for_days = var.backup.vault_lock.changeable_for_days
}

data "aws_iam_policy_document" "backup_assume" {
  count = var.backup.enabled ? 1 : 0

  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["backup.amazonaws.com"]
    }
    # Confused deputy: only AWS Backup acting for this account. No
    # aws:SourceArn: a backup job's source is not one fixed ARN, and a
    # condition on a key the service does not send refuses every job.
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account]
    }
  }
}

resource "aws_iam_role" "backup" {
  count = var.backup.enabled ? 1 : 0

  name                 = "${var.env}-dynamodb-backup"
  assume_role_policy   = data.aws_iam_policy_document.backup_assume[0].json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

resource "aws_iam_role_policy_attachment" "backup" {
  for_each = var.backup.enabled ? toset(["AWSBackupServiceRolePolicyForBackup", "AWSBackupServiceRolePolicyForRestores"]) : toset([])

  role       = aws_iam_role.backup[0].name
  policy_arn = "arn:${local.partition}:iam::aws:policy/service-role/${each.key}"
}

resource "aws_backup_selection" "this" {
  count = var.backup.enabled && var.backup.selection_enabled ? 1 : 0

  name         = "${var.env}-dynamodb-tables"
  plan_id      = aws_backup_plan.this[0].id
  iam_role_arn = aws_iam_role.backup[0].arn
  resources    = local.backup_table_arns
}
