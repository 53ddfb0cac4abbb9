output "table_name" {
  description = "Table name."
  value       = module.table.table_name
}

output "table_arn" {
  description = "Table ARN."
  value       = module.table.table_arn
}

output "stream_arn" {
  description = "Stream ARN."
  value       = module.table.stream_arn
}

output "gsi_arns" {
  description = "GSI ARNs by name."
  value       = module.table.gsi_arns
}

output "exceptions" {
  description = "Guideline exceptions taken."
  value       = module.table.exceptions
}

output "replicas" {
  description = "Per region: replica ARN, stream ARN and deletion protection."
  value = { for r in [module.replica_eu_central_1, module.replica_us_west_2] : r.region => {
    arn                         = r.arn
    stream_arn                  = r.stream_arn
    deletion_protection_enabled = r.deletion_protection_enabled
  } }
}
