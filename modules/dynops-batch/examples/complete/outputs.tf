output "job_queue_arn" {
  description = "The queue to pass to the batch engine."
  value       = module.dynops_batch.job_queue_arn
}

output "job_definition_arn" {
  description = "The job definition to pass to the batch engine."
  value       = module.dynops_batch.job_definition_arn
}
