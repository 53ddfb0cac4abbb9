# The runner of `dynops runbook run --in-aws`: an ECS cluster and a Fargate
# task definition whose container runs `dynops runbook run ... --state-bucket`
# on the team's shared state, so that a run survives the laptop that started
# it (docs/runner.md).
#
#   task role       the dynops-operator policy modules/dynamodb-access renders
#                   (generated from internal/permissions: the operator's rights,
#                   nothing more), plus the state prefix and the log group
#   execution role  pulls the image and writes the container's output to the log group
#   log group       the runs' output and their audit copy (--audit-log-group), with
#                   retention and an optional KMS key
#
# The terminal that starts a run needs ecs:RunTask on the task definition,
# ecs:DescribeTasks, iam:PassRole on the two roles and the state prefix: the
# `start_policy_json` output. The dynops-operator policy's cap
# (DenyOutsideDocumentedSet) denies the ECS and IAM actions: attach it to a
# role without that policy (docs/runner.md).

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  partition = data.aws_partition.current.partition
  region    = coalesce(var.region, data.aws_region.current.name)
  scope     = var.product_scope ? "${var.env}-${var.product}-" : "${var.env}-"
  name      = "${var.env}-${var.product}-dynops-runner"
  log_group = "/dynops/${local.scope}runner"
  container = "dynops"
  prefix    = "${trimsuffix(var.state_bucket.prefix, "/")}/"

  log_group_arn = "arn:${local.partition}:logs:${local.region}:${var.account_id}:log-group:${local.log_group}"
  bucket_arn    = "arn:${local.partition}:s3:::${var.state_bucket.name}"

  # Every statement has every key (one object type); null keys are left out of the JSON.
  statement = { Sid = null, Effect = "Allow", Action = null, Resource = null, Condition = null }

  # The state prefix and the log group: the operator's actions (its policy's
  # cap denies any other), on the runner's own resources.
  runner = {
    Version = "2012-10-17"
    Statement = [
      merge(local.statement, {
        Sid       = "RunbookState"
        Action    = ["s3:GetObject", "s3:PutObject"]
        Resource  = ["${local.bucket_arn}/${local.prefix}*"]
        Condition = { StringEquals = { "aws:ResourceAccount" = var.account_id } }
      }),
      merge(local.statement, {
        Sid       = "RunbookStateList"
        Action    = ["s3:ListBucket"]
        Resource  = [local.bucket_arn]
        Condition = { StringEquals = { "aws:ResourceAccount" = var.account_id }, StringLike = { "s3:prefix" = ["${local.prefix}*"] } }
      }),
      merge(local.statement, {
        Sid      = "AuditCopy"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = ["${local.log_group_arn}:*"]
      }),
    ]
  }

  # ECS tasks of this account only may assume the roles (confused deputy).
  trust = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "EcsTasks"
      Effect    = "Allow"
      Principal = { Service = "ecs-tasks.amazonaws.com" }
      Action    = ["sts:AssumeRole"]
      Condition = {
        StringEquals = { "aws:SourceAccount" = var.account_id }
        ArnLike      = { "aws:SourceArn" = "arn:${local.partition}:ecs:${local.region}:${var.account_id}:*" }
      }
    }]
  })

  execution = {
    Version = "2012-10-17"
    Statement = concat(
      [merge(local.statement, {
        Sid      = "ContainerLogs"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = ["${local.log_group_arn}:*"]
      })],
      var.image_repository_arn == null ? [] : [
        merge(local.statement, {
          Sid      = "EcrToken"
          Action   = ["ecr:GetAuthorizationToken"]
          Resource = ["*"]
        }),
        merge(local.statement, {
          Sid      = "EcrPull"
          Action   = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
          Resource = [var.image_repository_arn]
        }),
      ],
    )
  }

  # What the terminal that starts and follows runs needs: the task, the
  # roles it passes to ECS, and the state prefix (it records the task there
  # and follows the run there). ARNs from the names: known at plan.
  start = {
    Version = "2012-10-17"
    Statement = [
      local.runner.Statement[0],
      local.runner.Statement[1],
      merge(local.statement, {
        Sid       = "StartRun"
        Action    = ["ecs:RunTask"]
        Resource  = ["arn:${local.partition}:ecs:${local.region}:${var.account_id}:task-definition/${local.name}:*"]
        Condition = { ArnEquals = { "ecs:cluster" = "arn:${local.partition}:ecs:${local.region}:${var.account_id}:cluster/${local.name}" } }
      }),
      merge(local.statement, {
        Sid       = "FollowRun"
        Action    = ["ecs:DescribeTasks", "ecs:TagResource"]
        Resource  = ["arn:${local.partition}:ecs:${local.region}:${var.account_id}:task/${local.name}/*"]
        Condition = null
      }),
      merge(local.statement, {
        Sid       = "PassRunnerRoles"
        Action    = ["iam:PassRole"]
        Resource  = [for r in ["task", "execution"] : "arn:${local.partition}:iam::${var.account_id}:role/${local.name}-${r}"]
        Condition = { StringEquals = { "iam:PassedToService" = "ecs-tasks.amazonaws.com" } }
      }),
    ]
  }

  tags = merge(var.tags, { env = var.env, product = var.product, "managed-by" = "terraform" })
}

# The operator's policy, rendered by modules/dynamodb-access from
# internal/permissions (not created there: it is created here, for the task role).
module "operator" {
  source = "../dynamodb-access"

  env              = var.env
  product          = var.product
  account_id       = var.account_id
  region           = local.region
  product_scope    = var.product_scope
  health_check_ids = var.health_check_ids
  create_policies  = false
  # It creates no role here (create_policies = false renders documents only);
  # the boundary is passed all the same, as to every dynamodb-access call.
  permissions_boundary_arn = var.permissions_boundary_arn
}

################################################################################
# Logs
################################################################################

resource "aws_cloudwatch_log_group" "this" {
  name              = local.log_group
  retention_in_days = var.log_retention_in_days
  kms_key_id        = var.kms_key_arn

  tags = merge(local.tags, { Name = local.log_group })
}

################################################################################
# Roles
################################################################################

resource "aws_iam_role" "task" {
  name                 = "${local.name}-task"
  description          = "dynops runner task: the dynops-operator's rights on ${local.scope}* and the runbook state prefix"
  assume_role_policy   = local.trust
  permissions_boundary = var.permissions_boundary_arn

  tags = local.tags
}

resource "aws_iam_policy" "operator" {
  name        = "${local.name}-operator"
  description = "dynops-operator (modules/dynamodb-access) for the runner task of ${local.scope}*"
  policy      = module.operator.policy_documents["dynops-operator"]

  tags = local.tags
}

resource "aws_iam_role_policy_attachment" "operator" {
  role       = aws_iam_role.task.name
  policy_arn = aws_iam_policy.operator.arn
}

resource "aws_iam_role_policy" "runner" {
  name   = "runbook-state-and-logs"
  role   = aws_iam_role.task.id
  policy = jsonencode({ Version = local.runner.Version, Statement = [for s in local.runner.Statement : { for k, v in s : k => v if v != null }] })
}

resource "aws_iam_role" "execution" {
  name                 = "${local.name}-execution"
  description          = "dynops runner: pulls the image, writes the container's output to ${local.log_group}"
  assume_role_policy   = local.trust
  permissions_boundary = var.permissions_boundary_arn

  tags = local.tags
}

resource "aws_iam_role_policy" "execution" {
  name   = "pull-and-log"
  role   = aws_iam_role.execution.id
  policy = jsonencode({ Version = local.execution.Version, Statement = [for s in local.execution.Statement : { for k, v in s : k => v if v != null }] })
}

################################################################################
# Cluster and task definition
################################################################################

resource "aws_ecs_cluster" "this" {
  name = local.name

  setting {
    name  = "containerInsights"
    value = "enabled"
  }

  tags = local.tags
}

resource "aws_ecs_task_definition" "this" {
  family                   = local.name
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = var.cpu
  memory                   = var.memory
  task_role_arn            = aws_iam_role.task.arn
  execution_role_arn       = aws_iam_role.execution.arn

  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = var.cpu_architecture
  }

  # `dynops runbook run --in-aws` overrides the command with the run's.
  container_definitions = jsonencode([{
    name       = local.container
    image      = var.image
    essential  = true
    entryPoint = ["dynops"]
    command    = ["runbook", "list"]
    environment = [
      { name = "DYNOPS_AUDIT_LOG", value = "/tmp/dynops/audit.jsonl" },
    ]
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        "awslogs-group"         = aws_cloudwatch_log_group.this.name
        "awslogs-region"        = local.region
        "awslogs-stream-prefix" = "runner"
      }
    }
  }])

  tags = local.tags
}
