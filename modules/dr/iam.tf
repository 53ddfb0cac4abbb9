# The failover role: exactly what `dynops dr` calls (DDB-SEC-01), on this
# environment's tables only (DDB-SEC-03).

locals {
  regions = [local.primary, local.secondary]

  table_arns = flatten([for r in local.regions : [
    for t in var.tables : "arn:${local.partition}:dynamodb:${r}:${local.account}:table/${t}"
  ]])

  pointer_arns = flatten([for r in local.regions : [
    for n in values(local.pointer_names) : "arn:${local.partition}:ssm:${r}:${local.account}:parameter${n}"
  ]])

  role_enabled = var.failover_role.enabled && length(var.tables) > 0
}

data "aws_iam_policy_document" "assume" {
  count = local.role_enabled ? 1 : 0

  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "AWS"
      identifiers = var.failover_role.trusted_principal_arns
    }
  }
}

data "aws_iam_policy_document" "failover" {
  count = local.role_enabled ? 1 : 0

  statement {
    sid = "InspectAndFence"
    actions = [
      "dynamodb:DescribeTable",
      "dynamodb:GetResourcePolicy",
      "dynamodb:PutResourcePolicy",
      "dynamodb:DeleteResourcePolicy",
    ]
    resources = local.table_arns
  }

  # The canary item only: its partition key starts with dynops-dr-canary#.
  statement {
    sid       = "Canary"
    actions   = ["dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem"]
    resources = local.table_arns
    condition {
      test     = "ForAllValues:StringLike"
      variable = "dynamodb:LeadingKeys"
      values   = ["dynops-dr-canary#*"]
    }
  }

  statement {
    sid       = "Pointer"
    actions   = ["ssm:GetParameter", "ssm:PutParameter"]
    resources = local.pointer_arns
  }

  # GetMetricData has no resource-level permissions.
  statement {
    sid       = "ReplicationLatency"
    actions   = ["cloudwatch:GetMetricData"]
    resources = ["*"]
  }

  dynamic "statement" {
    for_each = var.route53 == null ? [] : [1]
    content {
      sid       = "FailoverRecords"
      actions   = ["route53:GetHealthCheck", "route53:UpdateHealthCheck"]
      resources = [for hc in aws_route53_health_check.this : "arn:${local.partition}:route53:::healthcheck/${hc.id}"]
    }
  }
}

resource "aws_iam_role" "failover" {
  count = local.role_enabled ? 1 : 0

  name               = coalesce(var.failover_role.name, "${var.env}-dynamodb-failover")
  description        = "dynops dr: fail the ${var.env} global tables over between ${local.primary} and ${local.secondary} (DDB-DR-01)."
  assume_role_policy = data.aws_iam_policy_document.assume[0].json
  tags               = local.tags
}

resource "aws_iam_role_policy" "failover" {
  count = local.role_enabled ? 1 : 0

  name   = "dynops-dr"
  role   = aws_iam_role.failover[0].id
  policy = data.aws_iam_policy_document.failover[0].json
}
