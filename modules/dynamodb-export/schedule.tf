# Scheduled gap-free incremental exports (schedule_enabled): EventBridge
# Scheduler invokes the Go Lambda cmd/export-scheduler once per table every
# schedule_expression; each invocation takes one step of the table's series
# (internal/export.Series: the code `dynops export incremental
# --since-checkpoint` runs) with the checkpoint in a DynamoDB table written
# only by conditional puts. See README "Why a Go Lambda".

locals {
  schedule_count            = var.schedule_enabled ? 1 : 0
  function_name             = "${var.env}-${var.product}-export-scheduler"
  function_arn              = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.function_name}"
  scheduler_lambda_role     = "${local.function_name}-lambda"
  scheduler_lambda_role_arn = "arn:${local.partition}:iam::${local.account_id}:role/${local.scheduler_lambda_role}"
  checkpoint_table_name     = "${var.env}-${var.product}-export-checkpoint"
  checkpoint_table_arn      = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.checkpoint_table_name}"
  log_group_name            = "/aws/lambda/${local.function_name}"
  log_group_arn             = "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:${local.log_group_name}"
  kms_statements            = var.kms_key_arn == null ? [] : [var.kms_key_arn]
}

module "checkpoint_table" {
  source = "../dynamodb-table"
  count  = local.schedule_count

  env        = var.env
  product    = var.product
  usage      = "export-checkpoint"
  hash_key   = "table_name"
  attributes = [{ name = "table_name", type = "S" }]

  stream_enabled               = false # nothing consumes the checkpoints' changes
  contributor_insights_enabled = var.contributor_insights_enabled
  tags                         = var.tags
}

# Confused deputy: Lambda acting for this account only (no aws:SourceArn: see
# modules/stream-consumer).
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

resource "aws_iam_role" "scheduler_lambda" {
  count                = local.schedule_count
  name                 = local.scheduler_lambda_role
  assume_role_policy   = data.aws_iam_policy_document.lambda_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

# Least privilege (DDB-SEC-01): exports of the named tables only, into their
# prefixes only; the checkpoint item; its own log group; metrics in its
# namespace only.
data "aws_iam_policy_document" "scheduler_lambda" {
  count = local.schedule_count

  statement {
    sid       = "ExportNamedTables"
    actions   = ["dynamodb:ExportTableToPointInTime", "dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups"]
    resources = local.table_arns
  }
  statement {
    sid       = "DescribeTheirExports"
    actions   = ["dynamodb:DescribeExport"]
    resources = [for a in local.table_arns : "${a}/export/*"]
  }
  statement {
    sid       = "Checkpoints"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem"]
    resources = [local.checkpoint_table_arn]
  }
  statement {
    sid       = "WriteExportObjects"
    actions   = ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl"]
    resources = local.table_prefix_arns
    # S3 ARNs carry no account: only this account's bucket of that name.
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceAccount"
      values   = [local.account_id]
    }
  }
  dynamic "statement" {
    for_each = local.kms_statements
    content {
      sid       = "EncryptExportObjects"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [statement.value]
      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["s3.${local.region}.amazonaws.com"]
      }
    }
  }
  statement {
    sid       = "Metrics"
    actions   = ["cloudwatch:PutMetricData"]
    resources = ["*"] # PutMetricData has no resource: the namespace condition scopes it
    condition {
      test     = "StringEquals"
      variable = "cloudwatch:namespace"
      values   = ["dynops/Export"]
    }
  }
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${local.log_group_arn}:*"]
  }
  # DDB-SEC-01: nothing outside the documented set, whatever a resource
  # policy (a table's, the bucket's) allows: an explicit Deny wins.
  statement {
    sid       = "DenyOutsideDocumentedSet"
    effect    = "Deny"
    resources = ["*"]
    not_actions = concat(
      ["dynamodb:ExportTableToPointInTime", "dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeExport", "dynamodb:GetItem", "dynamodb:PutItem"],
      ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl", "cloudwatch:PutMetricData", "logs:CreateLogStream", "logs:PutLogEvents"],
      length(local.kms_statements) == 0 ? [] : ["kms:GenerateDataKey", "kms:Decrypt"],
    )
  }
}

resource "aws_iam_role_policy" "scheduler_lambda" {
  count  = local.schedule_count
  name   = "export-series"
  role   = aws_iam_role.scheduler_lambda[0].id
  policy = data.aws_iam_policy_document.scheduler_lambda[0].json
}

resource "aws_cloudwatch_log_group" "scheduler" {
  count             = local.schedule_count
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  tags              = local.tags
}

resource "aws_lambda_function" "scheduler" {
  count            = local.schedule_count
  function_name    = local.function_name
  description      = "One step of each table's gap-free DynamoDB export series (dynops cmd/export-scheduler)"
  role             = aws_iam_role.scheduler_lambda[0].arn
  filename         = var.scheduler_zip_path
  source_code_hash = filebase64sha256(var.scheduler_zip_path)
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  timeout          = 60
  memory_size      = 128
  # Steps of one table never overlap; the conditional checkpoint writes stop
  # a stray concurrent step anyway.
  reserved_concurrent_executions = 1

  environment {
    variables = { CHECKPOINT_TABLE = module.checkpoint_table[0].table_name } # = local.checkpoint_table_name
  }
  tags = local.tags

  depends_on = [aws_iam_role_policy.scheduler_lambda, aws_cloudwatch_log_group.scheduler]
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
    # The schedules are in the default schedule group.
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = ["arn:${local.partition}:scheduler:${local.region}:${local.account_id}:schedule-group/default"]
    }
  }
}

resource "aws_iam_role" "scheduler" {
  count                = local.schedule_count
  name                 = "${local.function_name}-schedule"
  assume_role_policy   = data.aws_iam_policy_document.scheduler_assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

data "aws_iam_policy_document" "scheduler_invoke" {
  count = local.schedule_count
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
  count  = local.schedule_count
  name   = "invoke-export-scheduler"
  role   = aws_iam_role.scheduler[0].id
  policy = data.aws_iam_policy_document.scheduler_invoke[0].json
}

resource "aws_scheduler_schedule" "table" {
  for_each = var.schedule_enabled ? toset(local.table_names) : toset([])

  name                = "${each.value}-export"
  description         = "Gap-free export series of ${each.value} (DDB-EXP-01)"
  schedule_expression = var.schedule_expression

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.scheduler[0].arn
    role_arn = aws_iam_role.scheduler[0].arn
    input = jsonencode({
      table  = each.value
      bucket = local.bucket_name
      prefix = "${var.exports_prefix}/${each.value}"
    })
    retry_policy {
      maximum_retry_attempts = 0 # the next scheduled step retries from the checkpoint
    }
  }
}

################################################################################
# Alarms: behind, failed, gap, scheduler errors
################################################################################

resource "aws_cloudwatch_metric_alarm" "lag" {
  for_each = var.schedule_enabled ? toset(local.table_names) : toset([])

  alarm_name          = "${each.value}-export-lag"
  alarm_description   = "The export series of ${each.value} is more than ${var.lag_alarm_seconds}s behind, or stopped reporting (DDB-EXP-01). Runbook: runbooks/export-and-cross-region-restore.md"
  namespace           = "dynops/Export"
  metric_name         = "LagSeconds"
  dimensions          = { TableName = each.value }
  statistic           = "Maximum"
  period              = 900
  evaluation_periods  = 2
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.lag_alarm_seconds
  treat_missing_data  = "breaching" # a scheduler that stopped is behind
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = local.tags
}

# One alarm per table and event: an export ended FAILED, or a gap.
locals {
  series_events = {
    failed = {
      metric      = "FailedExports"
      description = "An export of %s ended FAILED; the series retries the window from the same checkpoint."
    }
    gap = {
      metric      = "Gaps"
      description = "The checkpoint of %s fell out of the PITR window: changes were lost to the series, which re-baselined with a full export."
    }
  }
  table_events = var.schedule_enabled ? {
    for pair in setproduct(local.table_names, keys(local.series_events)) : "${pair[0]}/${pair[1]}" => { table = pair[0], event = pair[1] }
  } : {}
}

resource "aws_cloudwatch_metric_alarm" "series_event" {
  for_each = local.table_events

  alarm_name          = "${each.value.table}-export-${each.value.event}"
  alarm_description   = "${format(local.series_events[each.value.event].description, each.value.table)} Runbook: runbooks/export-and-cross-region-restore.md"
  namespace           = "dynops/Export"
  metric_name         = local.series_events[each.value.event].metric
  dimensions          = { TableName = each.value.table }
  statistic           = "Sum"
  period              = 900
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "scheduler_errors" {
  count = local.schedule_count

  alarm_name          = "${local.function_name}-errors"
  alarm_description   = "The export scheduler Lambda failed a step (AWS error, checkpoint conflict, bad event). Runbook: runbooks/export-and-cross-region-restore.md"
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = aws_lambda_function.scheduler[0].function_name }
  statistic           = "Sum"
  period              = 900
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = local.tags
}

# The checkpoint table is a table like any other: throttling alarms (DDB-MON-01),
# sent where the export alarms go.
module "checkpoint_alarms" {
  source = "../dynamodb-alarms"
  count  = local.schedule_count

  table_name        = module.checkpoint_table[0].table_name
  create_sns_topic  = false
  sns_topic_arn     = var.alarm_actions[0] # a schedule needs alarm_actions (validation)
  dashboard_enabled = false
  tags              = var.tags
}
