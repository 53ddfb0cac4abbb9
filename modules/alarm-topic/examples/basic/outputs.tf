output "topic_arn" {
  description = "ARN of the encrypted alarm topic."
  value       = module.alarm_topic.topic_arn
}
