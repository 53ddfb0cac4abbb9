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

# The failover role can change a table's resource policy (the fence), which
# can switch protection off: it is a break-glass role, assumed with MFA only.
data "aws_iam_policy_document" "assume" {
  count = local.role_enabled ? 1 : 0

  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "AWS"
      identifiers = var.failover_role.trusted_principal_arns
    }
    dynamic "condition" {
      for_each = var.failover_role.require_mfa ? [1] : []
      content {
        test     = "Bool"
        variable = "aws:MultiFactorAuthPresent"
        values   = ["true"]
      }
    }
  }
}

locals {
  # The failover role's documented set: what `dynops dr` calls (internal/permissions).
  failover_actions = concat(
    ["dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"],
    ["dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem"],
    ["ssm:GetParameter", "ssm:PutParameter", "cloudwatch:GetMetricData", "fis:ListExperiments"],
    var.route53 == null ? [] : ["route53:GetHealthCheck", "route53:UpdateHealthCheck"],
  )
}

data "aws_iam_policy_document" "failover" {
  count = local.role_enabled ? 1 : 0

  statement {
    sid = "InspectAndFence"
    actions = [
      "dynamodb:DescribeTable",
      # The protection decision reads the table's env tag (internal/protect).
      "dynamodb:ListTagsOfResource",
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

  # dr failover --pause-template: is an experiment of the pause template
  # running? ListExperiments has no resource-level permissions.
  statement {
    sid       = "PauseExperiments"
    actions   = ["fis:ListExperiments"]
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

  # The break-glass actions only in a session with MFA: a resource policy
  # can grant more than this policy, or lift the fence; the pointer flips
  # writes between regions (internal/permissions BreakGlass).
  dynamic "statement" {
    for_each = var.failover_role.require_mfa ? [1] : []
    content {
      sid       = "DenyPolicyChangesWithoutMFA"
      effect    = "Deny"
      actions   = ["dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "ssm:PutParameter"]
      resources = ["*"]
      condition {
        test     = "BoolIfExists"
        variable = "aws:MultiFactorAuthPresent"
        values   = ["false"]
      }
    }
  }

  # DDB-SEC-01: nothing outside the documented set, whatever a table's
  # resource policy (which this role can write) allows: an explicit Deny wins.
  statement {
    sid         = "DenyOutsideDocumentedSet"
    effect      = "Deny"
    not_actions = local.failover_actions
    resources   = ["*"]
  }
}

resource "aws_iam_role" "failover" {
  count = local.role_enabled ? 1 : 0

  name                 = coalesce(var.failover_role.name, "${var.env}-dynamodb-failover")
  description          = "dynops dr: fail the ${var.env} global tables over between ${local.primary} and ${local.secondary} (DDB-DR-01)."
  assume_role_policy   = data.aws_iam_policy_document.assume[0].json
  permissions_boundary = var.permissions_boundary_arn
  # A role that may lift the fence without MFA carries its exception where
  # the plan and a reader of the role see it (DDB-EXC-01).
  tags = merge(local.tags, var.failover_role.require_mfa ? {} : {
    "dynops:exception:DDB-SEC-01" = substr(trimspace(replace(var.failover_role_no_mfa_reason, "/[^\\p{L}\\p{N}\\s_.:/=+@-]/", " ")), 0, 256)
  })
}

resource "aws_iam_role_policy" "failover" {
  count = local.role_enabled ? 1 : 0

  name   = "dynops-dr"
  role   = aws_iam_role.failover[0].id
  policy = data.aws_iam_policy_document.failover[0].json
}
