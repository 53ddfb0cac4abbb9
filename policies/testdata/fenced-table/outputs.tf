output "table_arn" {
  description = "ARN of the table the test fences."
  value       = module.table.table_arn
}
