# Continuous readiness (opt-in): the daily guideline check over this env's
# tables, a restore test of one table's latest restorable point, metrics and
# an alarm per failing rule to the stack's alarm topic (modules/dynamodb-readiness,
# docs/compliance.md). Build the Lambda first (make readiness-zip), then set
#   readiness = { zip_path = "bin/readiness.zip", restore_table_usage = "user" }
module "readiness" {
  source = "../../modules/dynamodb-readiness"
  count  = var.readiness == null ? 0 : 1

  permissions_boundary_arn = var.permissions_boundary_arn

  env                 = "prod"
  restore_table_arn   = module.stack.tables[var.readiness.restore_table_usage].arn
  readiness_zip_path  = var.readiness.zip_path
  schedule_expression = var.readiness.schedule_expression
  alarm_actions       = [module.stack.alarm_topic_arn]
}
