provider "aws" {
  region = "eu-west-1"
}

# A multi-tenant table (TENANT#<tenant_id> leads the partition key, and gsi1's
# partition key is TENANT#<tenant_id>#STATUS#<status>) and a plain table, with
# every access role for the env (DDB-SEC-01..03).
module "orders" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "order"

  hash_key  = "tenant_key"
  range_key = "order_key"
  attributes = [
    { name = "tenant_key", type = "S" },
    { name = "order_key", type = "S" },
    { name = "tenant_status", type = "S" },
    { name = "created_at", type = "N" },
  ]
  global_secondary_indexes = [
    { name = "gsi1", hash_key = "tenant_status", range_key = "created_at", non_key_attributes = ["total"] },
    { name = "gsi2", hash_key = "tenant_key", range_key = "created_at", projection_type = "KEYS_ONLY" },
  ]

  contributor_insights_enabled = false
}

module "users" {
  source = "../../../dynamodb-table"

  env     = var.env
  product = var.product
  usage   = "user"

  hash_key   = "user_id"
  attributes = [{ name = "user_id", type = "S" }]

  contributor_insights_enabled = false
}

module "access" {
  source = "../.."

  env        = var.env
  product    = var.product
  account_id = var.account_id

  application_tables = [module.orders.table_name, module.users.table_name]
  tenant_tables = {
    (module.orders.table_name) = { key_prefix = "TENANT#", index_key_delimiter = "#" }
  }

  create_roles             = true
  trusted_principal_arns   = ["arn:aws:iam::${var.account_id}:role/${var.env}-${var.product}-app"]
  permissions_boundary_arn = var.permissions_boundary_arn
}
