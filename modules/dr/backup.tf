# Tables that are not global (DDB-DR-01 pattern 1): AWS Backup takes a backup
# on a schedule and copies it to a vault in the secondary region, from which
# runbooks/dr-restore-in-region.md restores. Cross-region copy of DynamoDB
# backups needs AWS Backup's advanced features for DynamoDB turned on in the
# account (an account-wide setting this module does not manage).

locals {
  backup_table_arns = [for t in var.backup.tables : "arn:${local.partition}:dynamodb:${local.primary}:${local.account}:table/${t}"]
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

    copy_action {
      destination_vault_arn = aws_backup_vault.secondary[0].arn
      lifecycle {
        delete_after = var.backup.copy_retention_days
      }
    }
  }

  tags = local.tags
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

  name               = "${var.env}-dynamodb-backup"
  assume_role_policy = data.aws_iam_policy_document.backup_assume[0].json
  tags               = local.tags
}

resource "aws_iam_role_policy_attachment" "backup" {
  for_each = var.backup.enabled ? toset(["AWSBackupServiceRolePolicyForBackup", "AWSBackupServiceRolePolicyForRestores"]) : toset([])

  role       = aws_iam_role.backup[0].name
  policy_arn = "arn:${local.partition}:iam::aws:policy/service-role/${each.key}"
}

resource "aws_backup_selection" "this" {
  count = var.backup.enabled && var.backup.selection_enabled ? 1 : 0

  name         = "${var.env}-dynamodb-regional-tables"
  plan_id      = aws_backup_plan.this[0].id
  iam_role_arn = aws_iam_role.backup[0].arn
  resources    = local.backup_table_arns
}
