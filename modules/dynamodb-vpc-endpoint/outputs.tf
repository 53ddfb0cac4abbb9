output "vpc_endpoint_id" {
  description = "ID of the DynamoDB gateway endpoint."
  value       = aws_vpc_endpoint.dynamodb.id
}

output "prefix_list_id" {
  description = "Prefix list of DynamoDB in the region (for security group egress rules)."
  value       = aws_vpc_endpoint.dynamodb.prefix_list_id
}
