output "tables" {
  description = "The environment's tables: name, ARN, stream ARN, GSI ARNs, exceptions."
  value       = module.stack.tables
}

output "table_names" {
  description = "Table names, for `dynops check --table`."
  value       = module.stack.table_names
}

output "alarms" {
  description = "Per table usage: alarm names and dashboard name (DDB-MON-01)."
  value       = module.stack.alarms
}

output "stream_consumers" {
  description = "Per table usage: stream consumer function, mapping, DLQ and alarms (DDB-STREAM-04/05)."
  value       = module.stack.stream_consumers
}

output "readiness" {
  description = "The readiness run's function, schedule and alarms (null when var.readiness is null)."
  value       = one(module.readiness[*])
}
