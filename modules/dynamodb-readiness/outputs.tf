output "function_name" {
  description = "Name of the readiness Lambda."
  value       = aws_lambda_function.this.function_name
}

output "role_arn" {
  description = "ARN of the readiness Lambda's role."
  value       = aws_iam_role.lambda.arn
}

output "throwaway_prefix" {
  description = "Name prefix of the restore test's throwaway tables (the only tables the role may delete)."
  value       = local.throwaway
}

output "alarm_arns" {
  description = "ARNs of the readiness alarms (per rule, restore failed, restore time, DR not ready)."
  value       = [for a in aws_cloudwatch_metric_alarm.this : a.arn]
}
