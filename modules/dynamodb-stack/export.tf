# Exports to S3 (DDB-EXP-01) through modules/dynamodb-export: the hardened
# export bucket for every table of the stack, optionally the scheduled
# gap-free incremental exports.

module "export" {
  source = "../dynamodb-export"
  count  = var.export_enabled ? 1 : 0

  env     = var.env
  product = var.product
  tables  = [for t in module.table : { name = t.table_name, arn = t.table_arn }]

  schedule_enabled             = var.export_schedule_enabled
  scheduler_zip_path           = var.export_scheduler_zip_path
  alarm_actions                = length(var.export_alarm_actions) > 0 ? var.export_alarm_actions : [local.alarm_topic_arn]
  force_destroy                = var.export_force_destroy
  tls_only_disabled_reason     = var.export_tls_only_disabled_reason
  contributor_insights_enabled = var.contributor_insights_enabled
  permissions_boundary_arn     = var.permissions_boundary_arn

  tags = var.tags
}
