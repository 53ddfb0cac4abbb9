output "topic_arn" {
  description = "ARN of the topic (alarm_actions / ok_actions)."
  value       = aws_sns_topic.this.arn
}

output "kms_key_arn" {
  description = "ARN of the key that encrypts the topic (the module's own, or kms_key_arn)."
  value       = local.create_key ? aws_kms_key.this[0].arn : var.kms_key_arn
}
