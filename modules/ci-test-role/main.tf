locals {
  oidc_host = "token.actions.githubusercontent.com"
  # Built from the inputs (not the resource's attribute) so plans show the
  # whole trust policy; the role depends on the provider below.
  oidc_provider_arn = var.create_oidc_provider ? "arn:${var.partition}:iam::${var.account_id}:oidc-provider/${local.oidc_host}" : var.oidc_provider_arn
  subject           = "repo:${var.github_repository}:environment:${var.github_environment}"

  arn = "arn:${var.partition}"
  p   = var.resource_prefix
  a   = var.account_id
}

################################################################################
# Who: one repository's jobs in one environment, through GitHub's OIDC tokens
################################################################################

resource "aws_iam_openid_connect_provider" "github" {
  count = var.create_oidc_provider ? 1 : 0

  url             = "https://${local.oidc_host}"
  client_id_list  = ["sts.amazonaws.com"]
  thumbprint_list = ["6938fd4d98bab03faadb97b34396831e3780aea1", "1c58a3a8518e8759bf075b76b750d4f2df264fcd"]
  tags            = var.tags
}

data "aws_iam_policy_document" "trust" {
  statement {
    sid     = "GitHubActionsOIDC"
    actions = ["sts:AssumeRoleWithWebIdentity"]

    principals {
      type        = "Federated"
      identifiers = [local.oidc_provider_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "${local.oidc_host}:aud"
      values   = ["sts.amazonaws.com"]
    }

    # Exact match, no wildcard: forks, other branches' jobs without the
    # environment and other repositories get nothing.
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_host}:sub"
      values   = [local.subject]
    }
  }
}

resource "aws_iam_role" "this" {
  name                 = var.name
  description          = "dynops test suite against AWS (GitHub Actions OIDC, ${local.subject})"
  assume_role_policy   = data.aws_iam_policy_document.trust.json
  max_session_duration = var.max_session_duration
  tags                 = var.tags

  depends_on = [aws_iam_openid_connect_provider.github]

  lifecycle {
    precondition {
      condition     = var.create_oidc_provider || var.oidc_provider_arn != null
      error_message = "DDB-SEC-01: with create_oidc_provider = false, give the account's GitHub OIDC provider in oidc_provider_arn."
    }
  }
}

################################################################################
# What: the services the suite uses, changes only to resources named with the
# test prefix (DDB-SEC-01, DDB-SEC-03)
################################################################################

data "aws_iam_policy_document" "suite" {
  statement {
    sid     = "DynamoDBTestTables"
    actions = ["dynamodb:*"]
    resources = [
      "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*",
      "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*/*",
    ]
  }

  statement {
    sid = "DynamoDBAccountReads"
    # No resource-level permissions for these (list and account calls).
    actions   = ["dynamodb:ListTables", "dynamodb:ListExports", "dynamodb:ListImports", "dynamodb:ListBackups", "dynamodb:DescribeLimits", "dynamodb:ListGlobalTables", "dynamodb:DescribeEndpoints"]
    resources = ["*"]
  }

  statement {
    sid       = "S3TestBuckets"
    actions   = ["s3:*"]
    resources = ["${local.arn}:s3:::${local.p}*", "${local.arn}:s3:::${local.p}*/*"]
  }

  statement {
    sid     = "QueuesTopicsFunctionsTest"
    actions = ["sqs:*", "sns:*", "lambda:*", "scheduler:*", "backup:*", "ssm:*Parameter*", "ssm:AddTagsToResource", "ssm:ListTagsForResource", "ssm:RemoveTagsFromResource"]
    resources = [
      "${local.arn}:sqs:*:${local.a}:${local.p}*",
      "${local.arn}:sns:*:${local.a}:${local.p}*",
      "${local.arn}:lambda:*:${local.a}:function:${local.p}*",
      "${local.arn}:scheduler:*:${local.a}:schedule/*/${local.p}*",
      "${local.arn}:scheduler:*:${local.a}:schedule-group/${local.p}*",
      "${local.arn}:backup:*:${local.a}:backup-vault:${local.p}*",
      "${local.arn}:ssm:*:${local.a}:parameter/${local.p}*",
      "${local.arn}:ssm:*:${local.a}:parameter/dynops/${local.p}*",
    ]
  }

  statement {
    sid = "EventSourceMappingsOfTestFunctions"
    # Mappings have UUID ARNs: the function they invoke scopes them.
    actions   = ["lambda:CreateEventSourceMapping", "lambda:UpdateEventSourceMapping", "lambda:DeleteEventSourceMapping", "lambda:GetEventSourceMapping", "lambda:TagResource"]
    resources = ["*"]
    condition {
      test     = "ArnLike"
      variable = "lambda:FunctionArn"
      values   = ["${local.arn}:lambda:*:${local.a}:function:${local.p}*"]
    }
  }

  statement {
    sid       = "ListsWithoutResources"
    actions   = ["lambda:ListEventSourceMappings", "lambda:ListFunctions", "sqs:ListQueues", "sns:ListTopics", "s3:ListAllMyBuckets", "backup:ListBackupPlans", "backup:ListBackupVaults", "backup:CreateBackupPlan", "ssm:DescribeParameters", "scheduler:ListSchedules", "application-autoscaling:*", "cloudwatch:PutMetricData", "cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics", "cloudwatch:ListMetrics", "cloudwatch:DescribeAlarms", "logs:DescribeLogGroups", "sts:GetCallerIdentity", "kms:ListAliases", "route53:CreateHostedZone", "route53:ListHostedZones", "route53:CreateHealthCheck", "route53:ListHealthChecks", "route53:GetChange"]
    resources = ["*"]
  }

  statement {
    sid     = "AlarmsDashboardsLogsTest"
    actions = ["cloudwatch:*", "logs:*"]
    resources = [
      "${local.arn}:cloudwatch:*:${local.a}:alarm:${local.p}*",
      "${local.arn}:cloudwatch::${local.a}:dashboard/${local.p}*",
      "${local.arn}:logs:*:${local.a}:log-group:/aws/lambda/${local.p}*",
      "${local.arn}:logs:*:${local.a}:log-group:/aws/lambda/${local.p}*:*",
      "${local.arn}:logs:*:${local.a}:log-group:${local.p}*",
      "${local.arn}:logs:*:${local.a}:log-group:${local.p}*:*",
    ]
  }

  statement {
    sid = "GeneratedIDResources"
    # Zones, health checks and backup plans have generated IDs, not names;
    # the suite tags and deletes what it made. No data-plane actions.
    actions = ["route53:GetHostedZone", "route53:DeleteHostedZone", "route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets", "route53:ChangeTagsForResource", "route53:ListTagsForResource", "route53:GetHealthCheck", "route53:UpdateHealthCheck", "route53:DeleteHealthCheck",
    "backup:GetBackupPlan", "backup:UpdateBackupPlan", "backup:DeleteBackupPlan", "backup:TagResource", "backup:UntagResource", "backup:ListTags", "backup:CreateBackupSelection", "backup:GetBackupSelection", "backup:DeleteBackupSelection", "backup:ListBackupSelections"]
    resources = ["${local.arn}:route53:::hostedzone/*", "${local.arn}:route53:::healthcheck/*", "${local.arn}:backup:*:${local.a}:backup-plan:*"]
  }

  statement {
    sid = "KMSKeysOfTheTests"
    # Keys have generated IDs: created only with the test tag, managed only while they carry it.
    actions   = ["kms:CreateKey", "kms:TagResource"]
    resources = ["*"]
    condition {
      test     = "StringLike"
      variable = "aws:RequestTag/Name"
      values   = ["${local.p}*"]
    }
  }

  statement {
    sid       = "KMSManageTaggedKeys"
    actions   = ["kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy", "kms:GetKeyRotationStatus", "kms:EnableKeyRotation", "kms:ListResourceTags", "kms:ScheduleKeyDeletion", "kms:CreateGrant", "kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey*", "kms:CreateAlias", "kms:DeleteAlias"]
    resources = ["*"]
    condition {
      test     = "StringLike"
      variable = "aws:ResourceTag/Name"
      values   = ["${local.p}*"]
    }
  }

  statement {
    sid = "IAMTestRolesAndPolicies"
    # The modules under test create roles and policies; only with the prefix.
    actions = ["iam:CreateRole", "iam:DeleteRole", "iam:GetRole", "iam:UpdateRole", "iam:UpdateAssumeRolePolicy", "iam:TagRole", "iam:UntagRole", "iam:ListRoleTags",
      "iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy", "iam:ListRolePolicies", "iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:ListAttachedRolePolicies",
      "iam:ListInstanceProfilesForRole", "iam:CreatePolicy", "iam:DeletePolicy", "iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyVersions", "iam:CreatePolicyVersion",
    "iam:DeletePolicyVersion", "iam:TagPolicy", "iam:UntagPolicy"]
    resources = ["${local.arn}:iam::${local.a}:role/${local.p}*", "${local.arn}:iam::${local.a}:policy/${local.p}*"]
  }

  statement {
    sid = "PassTestRolesToTheirServices"
    # Only to the services the modules hand roles to: never to EC2 or others.
    actions   = ["iam:PassRole"]
    resources = ["${local.arn}:iam::${local.a}:role/${local.p}*"]
    condition {
      test     = "StringEquals"
      variable = "iam:PassedToService"
      values   = ["lambda.amazonaws.com", "scheduler.amazonaws.com", "backup.amazonaws.com", "dynamodb.amazonaws.com"]
    }
  }

  statement {
    sid = "NoChangesToThisRole"
    # The suite may create roles with the prefix; it may never widen its own.
    effect    = "Deny"
    actions   = ["iam:*"]
    resources = ["${local.arn}:iam::${local.a}:role/${var.name}", "${local.arn}:iam::${local.a}:policy/${var.name}", "${local.arn}:iam::${local.a}:oidc-provider/*"]
  }
}

resource "aws_iam_policy" "suite" {
  name        = var.name
  description = "What the dynops test suite needs against AWS: changes only to ${local.p}* resources."
  policy      = data.aws_iam_policy_document.suite.json
  tags        = var.tags
}

resource "aws_iam_role_policy_attachment" "suite" {
  role       = aws_iam_role.this.name
  policy_arn = aws_iam_policy.suite.arn
}
