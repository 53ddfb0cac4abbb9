output "dynops_flags" {
  description = "The flags that start a run in this runner."
  value       = module.runner.dynops_flags
}

output "task_policy_documents" {
  description = "The task role's policies."
  value       = module.runner.task_policy_documents
}

output "start_policy_json" {
  description = "The policy of the terminals that start runs."
  value       = module.runner.start_policy_json
}
