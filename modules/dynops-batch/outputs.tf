output "job_queue_arn" {
  description = "ARN of the job queue: the batch engine's queue (internal/engine/batch Options.Queue)."
  value       = aws_batch_job_queue.this.arn
}

output "job_queue_name" {
  description = "Name of the job queue."
  value       = aws_batch_job_queue.this.name
}

output "job_definition_arn" {
  description = "ARN (with revision) of the worker's job definition: the batch engine's Options.JobDefinition."
  value       = aws_batch_job_definition.worker.arn
}

output "job_definition_name" {
  description = "Name of the worker's job definition (the latest active revision when submitted by name)."
  value       = aws_batch_job_definition.worker.name
}

output "compute_environment_arn" {
  description = "ARN of the Fargate compute environment."
  value       = aws_batch_compute_environment.this.arn
}

output "job_role_arn" {
  description = "ARN of the shards' job role (the run's tables and prefixes only)."
  value       = aws_iam_role.job.arn
}

output "job_role_name" {
  description = "Name of the shards' job role."
  value       = aws_iam_role.job.name
}

output "execution_role_arn" {
  description = "ARN of the tasks' execution role (image pull, logs)."
  value       = aws_iam_role.execution.arn
}

output "log_group_name" {
  description = "CloudWatch Logs log group of the shards (streams shard/worker/<task ID>)."
  value       = aws_cloudwatch_log_group.this.name
}

output "submit_policy_json" {
  description = "The policy the terminal that drives a sharded run needs (batch:SubmitJob on this queue and job definition, TagResource/TerminateJob on jobs, DescribeJobs/ListJobs, the run prefix): attach it to the role that drives runs, one without the dynops-operator policy, whose cap denies the batch actions."
  value       = jsonencode(local.submit)
}

output "dynops_flags" {
  description = "The flags of `dynops table diff` that run it here: `dynops table diff ... $(terraform output -raw dynops_flags) --shards N`."
  value       = join(" ", ["--engine", "batch", "--batch-queue", aws_batch_job_queue.this.arn, "--batch-job-definition", aws_batch_job_definition.worker.arn, "--run-prefix", "s3://${var.run_location.bucket}/${var.run_location.prefix}"])
}
