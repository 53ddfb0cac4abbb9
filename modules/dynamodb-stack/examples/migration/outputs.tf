output "tables" {
  description = "The destination tables: name, ARN, stream ARN, GSI ARNs."
  value       = module.stack.tables
}
