output "vpc_endpoint_id" {
  description = "ID of the DynamoDB gateway endpoint."
  value       = module.dynamodb_endpoint.vpc_endpoint_id
}
