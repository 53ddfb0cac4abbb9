# Continuous readiness: EventBridge Scheduler invokes the Go Lambda
# cmd/readiness (internal/readiness) every schedule_expression. Each run
# checks the env's tables by the guideline (the code of `dynops check
# --env`), restores restore_table's latest restorable point in time to a
# throwaway `<env>-dynops-restoretest-<unix>` table, verifies and deletes it,
# runs `dynops dr status` for every global table of the env, and publishes
# dynops/Readiness metrics; an alarm per failing rule, one on the restore
# test and one on DR readiness notify alarm_actions. Runbook: runbooks/readiness-alarm.md

locals {
  arn_parts     = split(":", var.restore_table_arn)
  partition     = local.arn_parts[1]
  region        = local.arn_parts[3]
  account_id    = local.arn_parts[4]
  restore_table = split("/", local.arn_parts[5])[1]
  table_arn     = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table"
  env_tables    = "${local.table_arn}/${var.env}-*"
  # `dr status` reads a global table's replicas in their own regions.
  env_tables_any_region = "arn:${local.partition}:dynamodb:*:${local.account_id}:table/${var.env}-*"
  # The active-region pointers modules/dr creates (failover.DefaultPointer), in every region.
  env_pointers    = "arn:${local.partition}:ssm:*:${local.account_id}:parameter/dynops/dr/${var.env}-*/active-region"
  throwaway       = "${var.env}-dynops-restoretest-" # readiness.ThrowawayPrefix; modules/dynamodb-table refuses it for real tables
  throwaway_table = "${local.table_arn}/${local.throwaway}*"
  # The tag the restore test sets on its table once ACTIVE (readiness.ThrowawayTag):
  # only a table carrying it with the env's value can be deleted.
  throwaway_tag  = "dynops:restore-test"
  function_name  = "${var.env}-dynops-readiness"
  function_arn   = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.function_name}"
  log_group_name = "/aws/lambda/${local.function_name}"
  log_group_arn  = "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:${local.log_group_name}"
  namespace      = "dynops/Readiness" # readiness.MetricNamespace
  tags           = merge(var.tags, { "dynops:component" = "readiness" })

  # Every action the handler calls (internal/readiness, internal/guideline,
  # internal/restore, and internal/failover for `dr status`); the Deny below
  # refuses the rest.
  read_actions  = ["dynamodb:ListTables", "dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:Scan"]
  item_actions  = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:GetItem", "dynamodb:Query"]
  other_actions = ["cloudwatch:DescribeAlarms", "lambda:ListEventSourceMappings", "cloudwatch:PutMetricData", "logs:CreateLogStream", "logs:PutLogEvents"]
  dr_actions    = ["ssm:GetParameter", "cloudwatch:GetMetricData"]
  all_actions   = concat(local.read_actions, local.item_actions, ["dynamodb:RestoreTableToPointInTime", "dynamodb:DeleteTable", "dynamodb:TagResource"], local.other_actions, local.dr_actions)
}

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

resource "aws_iam_role" "lambda" {
  name                 = "${local.function_name}-lambda"
  assume_role_policy   = data.aws_iam_policy_document.lambda_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

# Least privilege (DDB-SEC-01): read the env's tables; restore only the
# chosen table and only into a throwaway name; write items, tag and delete
# only throwaway tables (delete: only those the restore test tagged); no
# resource-policy, PITR, deletion-protection or table changes. The Deny
# statements hold whatever else (a boundary, another policy) allows.
data "aws_iam_policy_document" "lambda" {
  statement {
    sid       = "ListTables"
    actions   = ["dynamodb:ListTables"]
    resources = ["*"] # ListTables has no resource
  }
  statement {
    sid       = "ReadEnvTables"
    actions   = ["dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:Scan"]
    resources = [local.env_tables]
  }
  # `dr status` of the env's global tables (internal/permissions "dr
  # status", without Route 53: the readiness run reads no health checks):
  # each replica in its own region, read only.
  statement {
    sid       = "DRStatusReplicas"
    actions   = ["dynamodb:DescribeTable", "dynamodb:GetResourcePolicy"]
    resources = [local.env_tables_any_region]
  }
  statement {
    sid       = "DRStatusPointers"
    actions   = ["ssm:GetParameter"]
    resources = [local.env_pointers]
  }
  statement {
    sid       = "DRStatusReplicationLatency"
    actions   = ["cloudwatch:GetMetricData"]
    resources = ["*"] # GetMetricData has no resource-level permissions; read only
  }
  statement {
    sid       = "RestoreSource"
    actions   = ["dynamodb:RestoreTableToPointInTime"]
    resources = [var.restore_table_arn]
  }
  # A restore writes the new table's items: AWS checks the item actions on
  # the target too.
  statement {
    sid       = "RestoreIntoThrowaway"
    actions   = concat(["dynamodb:RestoreTableToPointInTime"], local.item_actions)
    resources = [local.throwaway_table]
  }
  # RestoreTableToPointInTime takes no tags: the test tags its table once
  # ACTIVE, with this one tag only, and never a table the table module made
  # (those carry an env tag; a restored table carries none).
  statement {
    sid       = "TagThrowaway"
    actions   = ["dynamodb:TagResource"]
    resources = [local.throwaway_table]
    condition {
      test     = "ForAllValues:StringEquals"
      variable = "aws:TagKeys"
      values   = [local.throwaway_tag]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/${local.throwaway_tag}"
      values   = [var.env]
    }
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/env"
      values   = ["true"]
    }
  }
  statement {
    sid       = "DeleteTaggedThrowaway"
    actions   = ["dynamodb:DeleteTable"]
    resources = [local.throwaway_table]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/${local.throwaway_tag}"
      values   = [var.env]
    }
  }
  statement {
    sid       = "MonitoringFacts"
    actions   = ["cloudwatch:DescribeAlarms", "lambda:ListEventSourceMappings"]
    resources = ["*"] # both list account-wide; read only
  }
  statement {
    sid       = "Metrics"
    actions   = ["cloudwatch:PutMetricData"]
    resources = ["*"] # PutMetricData has no resource: the namespace condition scopes it
    condition {
      test     = "StringEquals"
      variable = "cloudwatch:namespace"
      values   = [local.namespace]
    }
  }
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${local.log_group_arn}:*"]
  }
  # Never delete, tag or write the items of an env table: only the throwaway
  # prefix, whatever else allows it; delete only what the test tagged.
  statement {
    sid           = "DenyDeleteOutsideThrowaway"
    effect        = "Deny"
    actions       = ["dynamodb:DeleteTable"]
    not_resources = [local.throwaway_table]
  }
  statement {
    sid       = "DenyDeleteUntagged"
    effect    = "Deny"
    actions   = ["dynamodb:DeleteTable"]
    resources = ["*"]
    condition {
      test     = "StringNotEquals"
      variable = "aws:ResourceTag/${local.throwaway_tag}"
      values   = [var.env]
    }
  }
  statement {
    sid           = "DenyItemsAndTagsOutsideThrowaway"
    effect        = "Deny"
    actions       = concat(local.item_actions, ["dynamodb:TagResource"])
    not_resources = [local.throwaway_table]
  }
  statement {
    sid           = "DenyRestoreOutsideSourceAndThrowaway"
    effect        = "Deny"
    actions       = ["dynamodb:RestoreTableToPointInTime"]
    not_resources = [var.restore_table_arn, local.throwaway_table]
  }
  statement {
    sid         = "DenyOutsideDocumentedSet"
    effect      = "Deny"
    resources   = ["*"]
    not_actions = local.all_actions
  }
}

resource "aws_iam_role_policy" "lambda" {
  name   = "readiness"
  role   = aws_iam_role.lambda.id
  policy = data.aws_iam_policy_document.lambda.json
}

resource "aws_cloudwatch_log_group" "this" {
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = local.tags
}

resource "aws_lambda_function" "this" {
  function_name    = local.function_name
  description      = "Readiness of env ${var.env}: guideline check, restore test, metrics (dynops cmd/readiness)"
  role             = aws_iam_role.lambda.arn
  filename         = var.readiness_zip_path
  source_code_hash = filebase64sha256(var.readiness_zip_path)
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  timeout          = 900 # the restore test waits for the throwaway table to be ACTIVE
  memory_size      = 256
  # One run at a time: two restore tests would double the throwaway tables.
  reserved_concurrent_executions = 1

  environment {
    variables = { READINESS_ENV = var.env, READINESS_RESTORE_TABLE = local.restore_table }
  }
  tags = local.tags

  depends_on = [aws_iam_role_policy.lambda, aws_cloudwatch_log_group.this]
}

data "aws_iam_policy_document" "scheduler_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = ["arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule-group/default"]
    }
  }
}

resource "aws_iam_role" "scheduler" {
  name                 = "${local.function_name}-schedule"
  assume_role_policy   = data.aws_iam_policy_document.scheduler_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

data "aws_iam_policy_document" "scheduler_invoke" {
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [local.function_arn]
  }
  statement {
    sid         = "DenyOutsideDocumentedSet"
    effect      = "Deny"
    not_actions = ["lambda:InvokeFunction"]
    resources   = ["*"]
  }
}

resource "aws_iam_role_policy" "scheduler" {
  name   = "invoke-readiness"
  role   = aws_iam_role.scheduler.id
  policy = data.aws_iam_policy_document.scheduler_invoke.json
}

resource "aws_scheduler_schedule" "this" {
  name                = local.function_name
  description         = "Readiness run of env ${var.env} (check, restore test of ${local.restore_table})"
  schedule_expression = var.schedule_expression

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.this.arn
    role_arn = aws_iam_role.scheduler.arn
    input    = jsonencode({ env = var.env, restore_table = local.restore_table })
    retry_policy {
      maximum_retry_attempts = 0 # the next run deletes what a failed one left
    }
  }
}

################################################################################
# Alarms: a failing rule, a failed or slow restore test, a stopped run
################################################################################

locals {
  # One alarm per guideline rule (FailingRule, per RuleID) and one per run
  # check (restore failed, restore time, DR not ready): every alarm of the
  # readiness run has the same shape, a daily maximum above a threshold.
  readiness_alarms = merge(
    { for r in var.rule_ids : r => {
      name        = lower(r)
      description = "Tables of env ${var.env} fail ${r} (docs/guideline.md), or the readiness run stopped reporting."
      metric      = "FailingRule"
      dimensions  = { Env = var.env, RuleID = r }
      threshold   = 0
      missing     = "breaching"
    } },
    {
      "restore-failed" = {
        name        = "restore-failed"
        description = "The restore test of ${local.restore_table} failed, or the readiness run stopped reporting."
        metric      = "RestoreTestFailed"
        dimensions  = { Env = var.env }
        threshold   = 0
        missing     = "breaching"
      }
      "dr-not-ready" = {
        name        = "dr-not-ready"
        description = "A global table of env ${var.env} has no region ready to fail over to (`dynops dr status`; the run's log and the DRReady metric per Table name it), or the readiness run stopped reporting."
        metric      = "DRNotReady" # readiness.MetricDRNotReady: 0 when every global table is ready
        dimensions  = { Env = var.env }
        threshold   = 0
        missing     = "breaching"
      }
      "restore-time" = {
        name        = "restore-time"
        description = "The restore test of ${local.restore_table} took longer than ${var.restore_time_alarm_seconds}s (dynamodb-meets-restore-time-target)."
        metric      = "RestoreTimeSeconds"
        dimensions  = { Env = var.env }
        threshold   = var.restore_time_alarm_seconds
        missing     = "missing" # a failed restore publishes no time: restore-failed alarms
      }
    },
  )
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.readiness_alarms

  alarm_name          = "${var.env}-readiness-${each.value.name}"
  alarm_description   = "${each.value.description} Runbook: runbooks/readiness-alarm.md"
  namespace           = local.namespace
  metric_name         = each.value.metric
  dimensions          = each.value.dimensions
  statistic           = "Maximum"
  period              = 86400
  evaluation_periods  = 1
  threshold           = each.value.threshold
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = each.value.missing
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = local.tags
}

# The alarms were four resources; state applied before keeps them (the
# rule alarms keep their keys, the rule IDs).
moved {
  from = aws_cloudwatch_metric_alarm.failing_rule
  to   = aws_cloudwatch_metric_alarm.this
}

moved {
  from = aws_cloudwatch_metric_alarm.restore_failed
  to   = aws_cloudwatch_metric_alarm.this["restore-failed"]
}

moved {
  from = aws_cloudwatch_metric_alarm.dr_not_ready
  to   = aws_cloudwatch_metric_alarm.this["dr-not-ready"]
}

moved {
  from = aws_cloudwatch_metric_alarm.restore_time
  to   = aws_cloudwatch_metric_alarm.this["restore-time"]
}
