output "cluster_arn" {
  description = "The ECS cluster (`dynops runbook run --in-aws --task-cluster`)."
  value       = aws_ecs_cluster.this.arn
}

output "task_definition_arn" {
  description = "The task definition (`--task-definition`)."
  value       = aws_ecs_task_definition.this.arn
}

output "task_role_arn" {
  description = "The role the runs run as: the dynops-operator's rights, the state prefix and the log group."
  value       = aws_iam_role.task.arn
}

output "execution_role_arn" {
  description = "The role ECS pulls the image and writes the container's logs with."
  value       = aws_iam_role.execution.arn
}

output "log_group_name" {
  description = "The runs' output and their audit copy (pass it as `--audit-log-group`)."
  value       = aws_cloudwatch_log_group.this.name
}

output "task_policy_documents" {
  description = "The task role's policies as attached: the operator's (from modules/dynamodb-access) and the runner's own (state prefix, logs), for review and the evaluator tests."
  value = {
    operator = module.operator.policy_documents["dynops-operator"]
    runner   = aws_iam_role_policy.runner.policy
  }
}

output "start_policy_json" {
  description = "The policy a terminal needs to start and follow runs (ecs:RunTask on this task definition in this cluster, ecs:DescribeTasks, iam:PassRole of the two roles to ECS tasks, the state prefix): attach it to the role that starts runs, one without the dynops-operator policy, whose cap denies the ECS and IAM actions."
  value       = jsonencode({ Version = local.start.Version, Statement = [for s in local.start.Statement : { for k, v in s : k => v if v != null }] })
}

output "dynops_flags" {
  description = "The flags of `dynops runbook run` that start a run here: `dynops runbook run NAME --incident ID $(terraform output -raw dynops_flags) ...`."
  value = join(" ", [
    "--in-aws",
    "--state-bucket", "${var.state_bucket.name}/${trimsuffix(var.state_bucket.prefix, "/")}",
    "--task-cluster", aws_ecs_cluster.this.arn,
    "--task-definition", aws_ecs_task_definition.this.arn,
    "--task-subnets", join(",", var.subnet_ids),
    "--task-security-groups", join(",", var.security_group_ids),
    "--audit-log-group", aws_cloudwatch_log_group.this.name,
    var.assign_public_ip ? "--task-public-ip" : "",
  ])
}
