# A Lambda consumer of one DynamoDB stream (DDB-STREAM-03/04/05): the event
# source mapping bisects failing batches, retries a bounded number of times,
# drops records older than a bound to an encrypted SQS DLQ kept 14 days, and
# the function may read this stream, write to this DLQ and its log group, and
# nothing else. Alarms: IteratorAge (warning, critical), Errors, DLQ depth and
# age of the oldest DLQ message.

data "aws_partition" "current" {}

locals {
  create_function = var.existing_function == null

  function_arn  = local.create_function ? aws_lambda_function.this[0].arn : var.existing_function.arn
  function_name = local.create_function ? aws_lambda_function.this[0].function_name : split(":", var.existing_function.arn)[6]
  role_name     = local.create_function ? aws_iam_role.this[0].name : var.existing_function.role_name

  # arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL
  region  = split(":", var.stream_arn)[3]
  account = split(":", var.stream_arn)[4]
  # Known at plan time, so the policy can be reviewed in the plan.
  dlq_arn = "arn:${data.aws_partition.current.partition}:sqs:${local.region}:${local.account}:${var.name}-dlq"

  # A customer managed key on the DLQ: sending needs GenerateDataKey and
  # Decrypt on it, through SQS only. A key ID or alias names no ARN: any key of
  # the account, still through SQS only.
  dlq_kms_key_arn = var.dlq_kms_master_key_id == null ? null : (
    startswith(var.dlq_kms_master_key_id, "arn:") ? var.dlq_kms_master_key_id : "arn:${data.aws_partition.current.partition}:kms:${local.region}:${local.account}:key/*"
  )

  # DDB-SEC-01: the role's documented set (the consumer's rights and the
  # handler's statements); the role denies every other action.
  consumer_actions = distinct(concat(
    ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams", "sqs:SendMessage", "logs:CreateLogStream", "logs:PutLogEvents"],
    local.dlq_kms_key_arn == null ? [] : ["kms:GenerateDataKey", "kms:Decrypt"],
    flatten([for st in var.handler_policy_statements : st.actions]),
  ))
}

################################################################################
# DLQ (DDB-STREAM-04): on-failure destination of the mapping
################################################################################

resource "aws_sqs_queue" "dlq" {
  name                      = "${var.name}-dlq"
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = var.dlq_kms_master_key_id == null ? true : null
  kms_master_key_id         = var.dlq_kms_master_key_id
  tags                      = var.tags
}

################################################################################
# Function, role and logs (when the module builds the function)
################################################################################

# Confused deputy: Lambda acting for this account only. No aws:SourceArn: a
# condition on it in an execution role's trust has been reported to break
# creating VPC functions (aws/aws-parallelcluster#6926).
data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account]
    }
  }
}

resource "aws_iam_role" "this" {
  count = local.create_function ? 1 : 0

  name                 = var.name
  assume_role_policy   = data.aws_iam_policy_document.assume.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags
}

resource "aws_cloudwatch_log_group" "this" {
  count = local.create_function ? 1 : 0

  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_in_days
  tags              = var.tags
}

resource "aws_lambda_function" "this" {
  count = local.create_function ? 1 : 0

  function_name    = var.name
  role             = aws_iam_role.this[0].arn
  filename         = var.filename
  source_code_hash = coalesce(var.source_code_hash, filebase64sha256(var.filename))
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  timeout          = var.timeout
  memory_size      = var.memory_size

  environment {
    variables = var.environment_variables
  }

  tags = var.tags

  depends_on = [aws_cloudwatch_log_group.this]
}

# Least privilege (DDB-SEC-01): read this stream, send to this DLQ, write this
# log group. The mapping uses the function's role for both the stream and the
# on-failure destination.
data "aws_iam_policy_document" "consumer" {
  statement {
    sid       = "ReadTheStream"
    actions   = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]
    resources = [var.stream_arn]
  }
  # ListStreams has no resource type (Service Authorization Reference): it
  # needs "*"; it lists stream ARNs, never records.
  statement {
    sid       = "ListStreams"
    actions   = ["dynamodb:ListStreams"]
    resources = ["*"]
  }
  statement {
    sid       = "SendFailedRecordsToTheDLQ"
    actions   = ["sqs:SendMessage"]
    resources = [local.dlq_arn]
  }
  dynamic "statement" {
    for_each = local.create_function ? [1] : []
    content {
      sid       = "WriteItsLogs"
      actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
      resources = ["arn:${data.aws_partition.current.partition}:logs:${local.region}:${local.account}:log-group:/aws/lambda/${var.name}:*"]
    }
  }
  dynamic "statement" {
    for_each = local.dlq_kms_key_arn == null ? [] : [1]
    content {
      sid       = "EncryptForTheDLQ"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [local.dlq_kms_key_arn]
      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["sqs.${local.region}.amazonaws.com"]
      }
    }
  }
  # DDB-SEC-01: nothing outside the documented set, whatever a resource
  # policy allows. Only on the role this module creates: an existing
  # function's role may hold rights for other work.
  dynamic "statement" {
    for_each = local.create_function ? [1] : []
    content {
      sid         = "DenyOutsideDocumentedSet"
      effect      = "Deny"
      not_actions = local.consumer_actions
      resources   = ["*"]
    }
  }
}

resource "aws_iam_role_policy" "consumer" {
  name   = "${var.name}-stream-consumer"
  role   = local.role_name
  policy = data.aws_iam_policy_document.consumer.json
}

data "aws_iam_policy_document" "handler" {
  dynamic "statement" {
    for_each = var.handler_policy_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }
}

resource "aws_iam_role_policy" "handler" {
  count = local.create_function && length(var.handler_policy_statements) > 0 ? 1 : 0

  name   = "${var.name}-handler"
  role   = aws_iam_role.this[0].name
  policy = data.aws_iam_policy_document.handler.json
}

################################################################################
# Event source mapping (DDB-STREAM-04)
################################################################################

resource "aws_lambda_event_source_mapping" "this" {
  event_source_arn  = var.stream_arn
  function_name     = local.function_arn
  starting_position = var.starting_position
  batch_size        = var.batch_size

  bisect_batch_on_function_error = true
  maximum_retry_attempts         = var.maximum_retry_attempts
  maximum_record_age_in_seconds  = var.maximum_record_age_in_seconds
  parallelization_factor         = var.parallelization_factor
  function_response_types        = var.report_batch_item_failures ? ["ReportBatchItemFailures"] : []

  destination_config {
    on_failure {
      destination_arn = local.dlq_arn
    }
  }

  dynamic "filter_criteria" {
    for_each = length(var.filter_patterns) > 0 ? [1] : []
    content {
      dynamic "filter" {
        for_each = var.filter_patterns
        content {
          pattern = filter.value
        }
      }
    }
  }

  # The DLQ must exist, and the role allow stream reads and DLQ sends, before the mapping starts.
  depends_on = [aws_sqs_queue.dlq, aws_iam_role_policy.consumer]
}
