provider "aws" {
  region = var.region
}

# The destination tables of a single-table to multi-table migration, created
# beside the old single table (which stays until the cutover has held):
# `dynops migrate plan --source dev-aiagent-single --routes routes.yaml` then
# runbooks/single-to-multi-table-migration.md.
module "stack" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  env        = var.env
  product    = var.product
  tables     = yamldecode(file("${path.module}/tables.yaml"))
  account_id = var.account_id

  contributor_insights_enabled = var.contributor_insights_enabled
}
