locals {
  # Partition, region and account of the run, read from the source tables'
  # ARNs (validated to share one), so every policy is known at plan.
  table_arn_parts = split(":", var.source_table_arns[0])
  partition       = local.table_arn_parts[1]
  region          = local.table_arn_parts[3]
  account_id      = local.table_arn_parts[4]

  log_group_name = "/aws/batch/${var.name}"
  log_group_arn  = "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:${local.log_group_name}"

  # ACCOUNT.dkr.ecr.REGION.amazonaws.com/REPO[:tag|@digest]: the only
  # repository the execution role may pull from; another registry needs no
  # ECR permission.
  ecr_image      = regex("^(?:([0-9]{12})\\.dkr\\.ecr\\.([a-z0-9-]+)\\.amazonaws\\.com(?:\\.cn)?/([^:@]+))?", var.image)
  ecr_repository = local.ecr_image[0] == null ? null : "arn:${local.partition}:ecr:${local.ecr_image[1]}:${local.ecr_image[0]}:repository/${local.ecr_image[2]}"

  # The roles' ARNs from their names, so the job definition is known at
  # plan (the definition depends on the roles all the same).
  job_role_arn       = "arn:${local.partition}:iam::${local.account_id}:role/${var.name}-job"
  execution_role_arn = "arn:${local.partition}:iam::${local.account_id}:role/${var.name}-execution"

  s3          = "arn:${local.partition}:s3:::"
  run_objects = "${local.s3}${var.run_location.bucket}/${var.run_location.prefix}/*"

  # The actions each role is documented to use (README): everything else is
  # denied explicitly, whatever a resource policy (a table's, a bucket's)
  # allows (DDB-SEC-01, as every role the modules create).
  write_actions = ["dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
  job_actions = sort(distinct(concat(
    ["dynamodb:DescribeTable", "dynamodb:Scan", "dynamodb:DescribeExport", "s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListBucket"],
    length(var.write_target_table_arns) == 0 ? [] : local.write_actions,
    length(var.data_kms_key_arns) == 0 ? [] : ["kms:Decrypt", "kms:GenerateDataKey"],
  )))
  execution_actions = concat(
    ["logs:CreateLogStream", "logs:PutLogEvents"],
    local.ecr_repository == null ? [] : ["ecr:GetAuthorizationToken", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
  )

  tags = var.tags
}

################################################################################
# Compute: Fargate compute environment, queue, the worker's job definition
################################################################################

# Named by its Name tag only: the name argument is compute_environment_name
# in provider 5.x and name in 6.x (docs/provider-6.md); no service_role, so
# Batch uses its service-linked role.
resource "aws_batch_compute_environment" "this" {
  type  = "MANAGED"
  state = "ENABLED"

  compute_resources {
    type               = "FARGATE"
    max_vcpus          = var.max_vcpus
    subnets            = var.subnet_ids
    security_group_ids = var.security_group_ids
  }

  tags = merge(local.tags, { Name = var.name })

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_batch_job_queue" "this" {
  name     = var.name
  state    = "ENABLED"
  priority = 1

  compute_environment_order {
    order               = 1
    compute_environment = aws_batch_compute_environment.this.arn
  }

  tags = local.tags
}

# One definition serves both stages: the engine (internal/engine/batch)
# overrides the command with `dynops shard run --run ... --stage map|reduce`
# and --shards N (or --shard 0/1).
resource "aws_batch_job_definition" "worker" {
  name                  = "${var.name}-worker"
  type                  = "container"
  platform_capabilities = ["FARGATE"]
  propagate_tags        = true

  container_properties = jsonencode(merge({
    image            = var.image
    command          = ["dynops", "version"]
    jobRoleArn       = local.job_role_arn
    executionRoleArn = local.execution_role_arn
    resourceRequirements = [
      { type = "VCPU", value = tostring(var.worker.vcpu) },
      { type = "MEMORY", value = tostring(var.worker.memory_mib) },
    ]
    environment = [
      { name = "AWS_REGION", value = local.region },
    ]
    networkConfiguration         = { assignPublicIp = var.assign_public_ip ? "ENABLED" : "DISABLED" }
    fargatePlatformConfiguration = { platformVersion = "LATEST" }
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        "awslogs-group"         = local.log_group_name
        "awslogs-region"        = local.region
        "awslogs-stream-prefix" = "shard"
      }
    }
    },
    # Fargate's 20 GiB are there without asking; more only when asked.
    { for k, v in { ephemeralStorage = { sizeInGiB = var.worker.ephemeral_storage_gib } } : k => v if var.worker.ephemeral_storage_gib > 20 },
  ))

  retry_strategy {
    attempts = var.worker.retry_attempts
  }

  timeout {
    attempt_duration_seconds = var.worker.timeout_seconds
  }

  tags = local.tags

  depends_on = [aws_iam_role.job, aws_iam_role.execution, aws_iam_role_policy.execution, aws_cloudwatch_log_group.this]
}

resource "aws_cloudwatch_log_group" "this" {
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = local.tags
}

################################################################################
# Roles: the tasks' execution role (image, logs) and the shards' job role
################################################################################

data "aws_iam_policy_document" "ecs_tasks" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

resource "aws_iam_role" "execution" {
  name                 = "${var.name}-execution"
  assume_role_policy   = data.aws_iam_policy_document.ecs_tasks.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

resource "aws_iam_role_policy" "execution" {
  name = "image-and-logs"
  role = aws_iam_role.execution.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      [{
        Sid      = "Logs"
        Effect   = "Allow"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = "${local.log_group_arn}:*"
      }],
      local.ecr_repository == null ? [] : [
        {
          Sid      = "EcrToken"
          Effect   = "Allow"
          Action   = ["ecr:GetAuthorizationToken"]
          Resource = "*"
        },
        {
          Sid      = "PullTheImage"
          Effect   = "Allow"
          Action   = ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"]
          Resource = local.ecr_repository
        },
      ],
      [{
        Sid       = "DenyOutsideDocumentedSet"
        Effect    = "Deny"
        NotAction = local.execution_actions
        Resource  = "*"
      }],
    )
  })
}

# The job role's trust: the Batch tasks, and with kubernetes_service_account
# that one service account through the cluster's OIDC provider (IRSA).
data "aws_iam_policy_document" "job_trust" {
  source_policy_documents = [data.aws_iam_policy_document.ecs_tasks.json]

  dynamic "statement" {
    for_each = var.kubernetes_service_account == null ? [] : [var.kubernetes_service_account]
    content {
      sid     = "KubernetesServiceAccount"
      actions = ["sts:AssumeRoleWithWebIdentity"]
      principals {
        type        = "Federated"
        identifiers = [statement.value.oidc_provider_arn]
      }
      condition {
        test     = "StringEquals"
        variable = "${split("oidc-provider/", statement.value.oidc_provider_arn)[1]}:sub"
        values   = ["system:serviceaccount:${statement.value.namespace}:${statement.value.name}"]
      }
      condition {
        test     = "StringEquals"
        variable = "${split("oidc-provider/", statement.value.oidc_provider_arn)[1]}:aud"
        values   = ["sts.amazonaws.com"]
      }
    }
  }
}

resource "aws_iam_role" "job" {
  name                 = "${var.name}-job"
  assume_role_policy   = data.aws_iam_policy_document.job_trust.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

# The shards' rights, scoped like the operator's for the run (DDB-SEC-01):
# read the named tables and their exports, read the export prefixes, read
# and write the run prefix; write (conditionally) only the named targets,
# and only when write_target_table_arns is set.
resource "aws_iam_role_policy" "job" {
  name = "run"
  role = aws_iam_role.job.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      [
        {
          Sid      = "ReadTables"
          Effect   = "Allow"
          Action   = ["dynamodb:DescribeTable", "dynamodb:Scan"]
          Resource = var.source_table_arns
        },
        {
          Sid      = "ReadExports"
          Effect   = "Allow"
          Action   = ["dynamodb:DescribeExport"]
          Resource = [for a in var.source_table_arns : "${a}/export/*"]
        },
        {
          Sid      = "ReadWriteRunPrefix"
          Effect   = "Allow"
          Action   = ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"]
          Resource = local.run_objects
        },
        {
          Sid       = "ListRunPrefix"
          Effect    = "Allow"
          Action    = ["s3:ListBucket"]
          Resource  = "${local.s3}${var.run_location.bucket}"
          Condition = { StringLike = { "s3:prefix" = ["${var.run_location.prefix}/*", var.run_location.prefix] } }
        },
      ],
      length(var.export_locations) == 0 ? [] : [{
        Sid      = "ReadExportObjects"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = [for l in var.export_locations : "${local.s3}${l.bucket}/${l.prefix}/*"]
      }],
      [for i, l in var.export_locations : {
        Sid       = "ListExportPrefix${i}"
        Effect    = "Allow"
        Action    = ["s3:ListBucket"]
        Resource  = "${local.s3}${l.bucket}"
        Condition = { StringLike = { "s3:prefix" = ["${l.prefix}/*", l.prefix] } }
      }],
      length(var.write_target_table_arns) == 0 ? [] : [{
        Sid      = "ConditionalWritesToTargets"
        Effect   = "Allow"
        Action   = local.write_actions
        Resource = var.write_target_table_arns
      }],
      length(var.data_kms_key_arns) == 0 ? [] : [{
        Sid      = "DataKeys"
        Effect   = "Allow"
        Action   = ["kms:Decrypt", "kms:GenerateDataKey"]
        Resource = var.data_kms_key_arns
      }],
      [{
        Sid       = "DenyOutsideDocumentedSet"
        Effect    = "Deny"
        NotAction = local.job_actions
        Resource  = "*"
      }],
    )
  })
}

################################################################################
# Submit: what the terminal that drives a run (`table diff --engine batch`)
# needs. The dynops-operator policy's cap denies the batch actions, so this
# goes on a role of its own (the runner module's start policy works alike).
################################################################################

locals {
  job_queue_arn      = "arn:${local.partition}:batch:${local.region}:${local.account_id}:job-queue/${var.name}"
  job_definition_arn = "arn:${local.partition}:batch:${local.region}:${local.account_id}:job-definition/${var.name}-worker"

  submit = {
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "SubmitShards"
        Effect   = "Allow"
        Action   = ["batch:SubmitJob"]
        Resource = [local.job_queue_arn, local.job_definition_arn, "${local.job_definition_arn}:*"]
      },
      {
        Sid      = "FollowAndCancelShards"
        Effect   = "Allow"
        Action   = ["batch:TagResource", "batch:TerminateJob"]
        Resource = ["arn:${local.partition}:batch:${local.region}:${local.account_id}:job/*"]
      },
      {
        # DescribeJobs and ListJobs take no resource (Service Authorization Reference, AWS Batch).
        Sid      = "ReadJobs"
        Effect   = "Allow"
        Action   = ["batch:DescribeJobs", "batch:ListJobs"]
        Resource = ["*"]
      },
      {
        Sid      = "RunPrefix"
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject"]
        Resource = [local.run_objects]
      },
    ]
  }
}
