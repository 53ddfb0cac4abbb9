# An SNS topic for CloudWatch alarms, encrypted at rest (DDB-SEC-04).
#
# CloudWatch cannot publish to a topic encrypted with the AWS managed key
# alias/aws/sns: its key policy cannot be changed to let cloudwatch.amazonaws.com
# use it. So the topic gets a customer managed key whose policy lets the
# account administer it (IAM policies decide who else may) and lets CloudWatch
# use it only for this account's alarms whose names start with
# alarm_name_prefix (aws:SourceAccount, aws:SourceArn: no confused deputy).
# See "Enable compatibility between event sources from AWS services and
# encrypted topics" in the SNS developer guide.

data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  create_key = var.kms_key_arn == null
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.name
}

data "aws_iam_policy_document" "key" {
  count = local.create_key ? 1 : 0

  statement {
    sid       = "AccountAdministersTheKey"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${var.account_id}:root"]
    }
  }

  statement {
    sid       = "CloudWatchAlarmsPublishToTheTopic"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["cloudwatch.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [var.account_id]
    }
    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = ["arn:${local.partition}:cloudwatch:${local.region}:${var.account_id}:alarm:${var.alarm_name_prefix}*"]
    }
  }
}

resource "aws_kms_key" "this" {
  count = local.create_key ? 1 : 0

  description             = "SNS topic ${var.name}: CloudWatch alarm notifications (DDB-SEC-04)"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.key[0].json
  tags                    = var.tags
}

resource "aws_kms_alias" "this" {
  count = local.create_key ? 1 : 0

  name          = "alias/${var.name}"
  target_key_id = aws_kms_key.this[0].key_id
}

resource "aws_sns_topic" "this" {
  name              = var.name
  kms_master_key_id = local.create_key ? aws_kms_key.this[0].arn : var.kms_key_arn
  tags              = var.tags
}
