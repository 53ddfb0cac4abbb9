provider "aws" {
  region = "eu-west-1"
}

# A multi-tenant table (TENANT#<tenant_id> leads the partition key) and a plain
# table, with every access role for the env (DDB-SEC-01..03). The tenant key
# also keys every tenant-scoped GSI (gsi1, gsi2: DDB-SEC-02 index keys, so
# dynamodb:LeadingKeys bounds them); gsi3 spans tenants (operations queries by
# status), is marked cross-tenant with its reason, and the tenant role is
# denied it.
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
    { name = "status_created", type = "S" },
    { name = "order_status", type = "S" },
    { name = "created_at", type = "N" },
  ]
  global_secondary_indexes = [
    { name = "gsi1", hash_key = "tenant_key", range_key = "status_created", non_key_attributes = ["total"] },
    { name = "gsi2", hash_key = "tenant_key", range_key = "created_at", projection_type = "KEYS_ONLY" },
    { name = "gsi3", hash_key = "order_status", range_key = "created_at", projection_type = "KEYS_ONLY" },
  ]
  tags = {
    "dynops:tenant-key"        = "tenant_key"
    "dynops:cross-tenant:gsi3" = "operations: open orders of every tenant"
  }

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
    (module.orders.table_name) = {
      key_prefix           = "TENANT#"
      index_key_delimiter  = "#"
      cross_tenant_indexes = { gsi3 = "operations: open orders of every tenant" }
    }
  }

  health_check_ids            = var.health_check_ids
  fis_experiment_template_ids = var.fis_experiment_template_ids
  audit_log_group             = var.audit_log_group

  create_roles           = true
  trusted_principal_arns = ["arn:aws:iam::${var.account_id}:role/${var.env}-${var.product}-app"]
  # The tenant role has its own callers (the tenant-facing service), never the app's.
  role_trusted_principal_arns = {
    tenant = ["arn:aws:iam::${var.account_id}:role/${var.env}-${var.product}-tenant-api"]
  }
  permissions_boundary_arn = var.permissions_boundary_arn
}
