locals {
  oidc_host = "token.actions.githubusercontent.com"
  # Built from the inputs (not the resource's attribute) so plans show the
  # whole trust policy; the role depends on the provider below.
  oidc_provider_arn = var.create_oidc_provider ? "arn:${var.partition}:iam::${var.account_id}:oidc-provider/${local.oidc_host}" : var.oidc_provider_arn
  subject           = "repo:${var.github_repository}:environment:${var.github_environment}"

  arn = "arn:${var.partition}"
  p   = var.resource_prefix
  a   = var.account_id

  # Every role the suite creates must carry this boundary (DDB-SEC-01): the
  # most any of them can do, whatever policy the suite attaches to it.
  boundary_name = "${var.name}-boundary"
  boundary_arn  = "${local.arn}:iam::${local.a}:policy/${local.boundary_name}"
  # The DynamoDB actions on a table, index, stream, backup or global table,
  # denied outside the prefix (NotResource) to the suite and to every role it
  # creates: a table policy allowing everyone cannot widen them. Account-level
  # reads (List*, Describe*) are not among them, nor ImportTable (a new table
  # has no resource policy yet).
  dynamodb_resource_actions = [
    "dynamodb:*Item", "dynamodb:Scan", "dynamodb:Query", "dynamodb:PartiQL*", "dynamodb:Update*", "dynamodb:Delete*", "dynamodb:Put*",
    "dynamodb:Create*", "dynamodb:Restore*", "dynamodb:Export*", "dynamodb:*Resource", "dynamodb:*Destination", "dynamodb:GetRecords",
  ]
  dynamodb_test_resources = [
    "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*",
    "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*/*",
    "${local.arn}:dynamodb::${local.a}:global-table/${local.p}*",
  ]
  workflow_refs = var.github_workflow_refs != null ? var.github_workflow_refs : ["${var.github_repository}/.github/workflows/test-aws.yml@refs/heads/main"]
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

    # And only the named workflow files at the named refs: a job in the
    # environment from another workflow or branch gets nothing (the
    # environment's protection rules say who may run it: docs/iam-roles.md).
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_host}:job_workflow_ref"
      values   = local.workflow_refs
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
    precondition {
      condition     = !startswith(var.name, var.resource_prefix)
      error_message = "DDB-SEC-01: name (${var.name}) starts with resource_prefix (${var.resource_prefix}): the suite could change its own role. Pick a name outside the prefix."
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
    sid = "TestTablesOnly"
    # Whatever a table's resource policy grants (one allowing everyone, say):
    # no table, index, stream, backup or global table without the prefix.
    effect        = "Deny"
    actions       = local.dynamodb_resource_actions
    not_resources = local.dynamodb_test_resources
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
    actions   = ["lambda:ListEventSourceMappings", "lambda:ListFunctions", "sqs:ListQueues", "sns:ListTopics", "s3:ListAllMyBuckets", "backup:ListBackupPlans", "backup:ListBackupVaults", "backup:CreateBackupPlan", "ssm:DescribeParameters", "scheduler:ListSchedules", "application-autoscaling:*", "cloudwatch:PutMetricData", "cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics", "cloudwatch:ListMetrics", "cloudwatch:DescribeAlarms", "logs:DescribeLogGroups", "sts:GetCallerIdentity", "kms:ListAliases", "route53:ListHostedZones", "route53:ListHealthChecks", "route53:GetChange"]
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
    sid = "BackupPlansByID"
    # Backup plans have generated IDs, not names; the suite deletes what it made. No data-plane actions.
    actions   = ["backup:GetBackupPlan", "backup:UpdateBackupPlan", "backup:DeleteBackupPlan", "backup:TagResource", "backup:UntagResource", "backup:ListTags", "backup:CreateBackupSelection", "backup:GetBackupSelection", "backup:DeleteBackupSelection", "backup:ListBackupSelections"]
    resources = ["${local.arn}:backup:*:${local.a}:backup-plan:*"]
  }

  dynamic "statement" {
    # Route 53 has no tags in IAM: only the test zones named by ID, records
    # named with the prefix. No zone is created or deleted.
    for_each = length(var.route53_zone_ids) > 0 ? [1] : []
    content {
      sid       = "Route53TestZones"
      actions   = ["route53:GetHostedZone", "route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets", "route53:ListTagsForResource"]
      resources = [for z in var.route53_zone_ids : "${local.arn}:route53:::hostedzone/${z}"]
      condition {
        test     = "ForAllValues:StringLike"
        variable = "route53:ChangeResourceRecordSetsNormalizedRecordNames"
        values   = ["${local.p}*", "*.${local.p}*"]
      }
    }
  }

  dynamic "statement" {
    # Health checks have no names, tags in IAM or parent zone: allowed only
    # in an account of its own (route53_health_checks_reason says why).
    for_each = var.route53_health_checks_reason != null ? [1] : []
    content {
      sid       = "Route53HealthChecks"
      actions   = ["route53:CreateHealthCheck", "route53:GetHealthCheck", "route53:UpdateHealthCheck", "route53:DeleteHealthCheck", "route53:ChangeTagsForResource"]
      resources = ["*"]
    }
  }

  statement {
    sid = "KMSKeysOfTheTests"
    # CreateKey with tags needs TagResource on "*" (AWS KMS: not restricted
    # to particular keys); TagKeysOfOthersDenied keeps it off existing keys.
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
    sid = "TagKeysOfOthersDenied"
    # A key's tags come only from its CreateKey: tagging an existing key
    # (someone else's, to pass KMSManageTaggedKeys) is denied.
    effect    = "Deny"
    actions   = ["kms:TagResource", "kms:UntagResource"]
    resources = ["${local.arn}:kms:*:*:key/*"]
  }

  statement {
    sid = "IAMTestRolesWithTheBoundary"
    # A role is created, given policies or a boundary only with the boundary.
    actions   = ["iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy", "iam:PutRolePermissionsBoundary"]
    resources = ["${local.arn}:iam::${local.a}:role/${local.p}*"]
    condition {
      test     = "StringEquals"
      variable = "iam:PermissionsBoundary"
      values   = [local.boundary_arn]
    }
  }

  statement {
    sid       = "IAMAttachOnlyTestOrNamedPolicies"
    effect    = "Deny"
    actions   = ["iam:AttachRolePolicy"]
    resources = ["*"]
    condition {
      test     = "ArnNotLike"
      variable = "iam:PolicyARN"
      values   = concat(["${local.arn}:iam::${local.a}:policy/${local.p}*"], var.attachable_policy_arns)
    }
  }

  statement {
    sid = "IAMTestRolesAndPolicies"
    actions = ["iam:DeleteRole", "iam:GetRole", "iam:UpdateRole", "iam:UpdateAssumeRolePolicy", "iam:TagRole", "iam:UntagRole", "iam:ListRoleTags", "iam:GetRolePolicy", "iam:DeleteRolePolicy", "iam:ListRolePolicies", "iam:DetachRolePolicy", "iam:ListAttachedRolePolicies",
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
    sid = "NeverAssumeOrUnboundTheTestRoles"
    # The roles it creates are for the services under test, never for the
    # suite's own session; their boundary stays.
    effect    = "Deny"
    actions   = ["sts:AssumeRole", "sts:TagSession", "sts:SetSourceIdentity", "iam:DeleteRolePermissionsBoundary"]
    resources = ["*"]
  }

  statement {
    sid = "NoChangesToThisRole"
    # The suite may create roles with the prefix; it may never widen its own
    # role, its policy, its boundary or the OIDC provider.
    effect    = "Deny"
    actions   = ["iam:*"]
    resources = ["${local.arn}:iam::${local.a}:role/${var.name}", "${local.arn}:iam::${local.a}:policy/${var.name}", local.boundary_arn, "${local.arn}:iam::${local.a}:oidc-provider/*"]
  }
}

################################################################################
# The boundary of every role the suite creates: the services under test on
# prefixed resources, nothing in IAM or STS
################################################################################

data "aws_iam_policy_document" "boundary" {
  statement {
    sid = "ServicesOnTestResources"
    actions = ["dynamodb:*", "s3:*", "sqs:*", "sns:*", "lambda:InvokeFunction", "lambda:GetFunction", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
    "backup:*", "ssm:GetParameter*", "ssm:PutParameter"]
    resources = [
      "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*",
      "${local.arn}:dynamodb:*:${local.a}:table/${local.p}*/*",
      "${local.arn}:s3:::${local.p}*",
      "${local.arn}:s3:::${local.p}*/*",
      "${local.arn}:sqs:*:${local.a}:${local.p}*",
      "${local.arn}:sns:*:${local.a}:${local.p}*",
      "${local.arn}:lambda:*:${local.a}:function:${local.p}*",
      "${local.arn}:logs:*:${local.a}:log-group:*${local.p}*",
      "${local.arn}:backup:*:${local.a}:backup-vault:${local.p}*",
      "${local.arn}:ssm:*:${local.a}:parameter/*${local.p}*",
    ]
  }

  statement {
    sid       = "ReadsWithoutResources"
    actions   = ["dynamodb:ListStreams", "dynamodb:ListTables", "dynamodb:DescribeLimits", "cloudwatch:PutMetricData", "cloudwatch:GetMetricData", "tag:GetResources", "sts:GetCallerIdentity"]
    resources = ["*"]
  }

  dynamic "statement" {
    # Health checks have no names or tags in IAM: a role the suite creates
    # reaches them only where the suite itself may (route53_health_checks_reason).
    for_each = var.route53_health_checks_reason != null ? [1] : []
    content {
      sid       = "Route53HealthChecks"
      actions   = ["route53:GetHealthCheck", "route53:UpdateHealthCheck"]
      resources = ["*"]
    }
  }

  statement {
    sid       = "KeysOfTheTests"
    actions   = ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*", "kms:DescribeKey", "kms:CreateGrant"]
    resources = ["*"]
    condition {
      test     = "StringLike"
      variable = "aws:ResourceTag/Name"
      values   = ["${local.p}*"]
    }
  }

  statement {
    sid = "TestTablesOnly"
    # Whatever a table's resource policy grants (one allowing everyone, say):
    # no table, index, stream, backup or global table without the prefix.
    effect        = "Deny"
    actions       = local.dynamodb_resource_actions
    not_resources = local.dynamodb_test_resources
  }

  statement {
    sid = "BackupCopiesIntoTestVaults"
    # AWS Backup's copy job (the backup role of modules/dr under test) reads
    # the recovery point it copies; recovery points have no names.
    actions   = ["backup:CopyFromBackupVault"]
    resources = ["*"]
  }

  statement {
    sid       = "NoIdentityChanges"
    effect    = "Deny"
    actions   = ["iam:*", "sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "organizations:*", "account:*"]
    resources = ["*"]
  }
}

resource "aws_iam_policy" "boundary" {
  name        = local.boundary_name
  description = "Permissions boundary of every role the dynops test suite creates: services under test on ${local.p}* resources, no IAM."
  policy      = data.aws_iam_policy_document.boundary.json
  tags        = var.tags
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

