output "function_name" {
  description = "The readiness Lambda."
  value       = module.readiness.function_name
}
