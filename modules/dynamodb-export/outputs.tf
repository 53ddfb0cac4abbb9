output "bucket_name" {
  description = "The export bucket, for `dynops export ... --bucket`."
  value       = aws_s3_bucket.this.id
}

output "bucket_arn" {
  description = "The export bucket's ARN."
  value       = aws_s3_bucket.this.arn
}

output "table_prefixes" {
  description = "Per table, the key prefix its exports go under (scheduled exports add /full and /incremental)."
  value       = { for t in local.table_names : t => "${var.exports_prefix}/${t}" }
}

output "checkpoint_table_name" {
  description = "The series checkpoint table, for `dynops export incremental --since-checkpoint --checkpoint-table`; null without a schedule."
  value       = var.schedule_enabled ? module.checkpoint_table[0].table_name : null
}

output "scheduler_function_name" {
  description = "The scheduler Lambda; null without a schedule."
  value       = var.schedule_enabled ? aws_lambda_function.scheduler[0].function_name : null
}

output "scheduler_role_arn" {
  description = "The scheduler Lambda's role (allowed by the bucket policy); null without a schedule."
  value       = var.schedule_enabled ? aws_iam_role.scheduler_lambda[0].arn : null
}
