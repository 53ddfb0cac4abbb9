output "table_name" {
  description = "The bad table's name."
  value       = aws_dynamodb_table.user.name
}
