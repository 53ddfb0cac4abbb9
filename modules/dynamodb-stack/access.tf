# IAM for the stack's tables (DDB-SEC-01..03): modules/dynamodb-access with the
# application policy on every table, tenant isolation on the tables listed in
# access.tenant_tables, and the investigator, data-patch and dynops-operator
# policies scoped to {env}-* tables. Off unless access is given (it needs the
# account ID, which a plan must not ask STS for).
module "access" {
  source = "../dynamodb-access"
  count  = var.access == null ? 0 : 1

  env        = var.env
  product    = var.product
  account_id = local.access.account_id

  application_tables = [for t in module.table : t.table_name]
  # Every GSI of a tenant table that is not keyed by the table's partition
  # key (the tenant key) is denied to the tenant role (DenyCrossTenantIndexes):
  # dynamodb:LeadingKeys bounds only the key a request names, so such an index
  # could return another tenant's items. Derived from the table definition,
  # not from an opt-in tag or list; cross_tenant_indexes adds its reasons.
  tenant_tables = { for usage, cfg in local.access.tenant_tables : module.table[usage].table_name => merge(cfg, {
    cross_tenant_indexes = merge({
      for g in try(var.tables[usage].global_secondary_indexes, []) :
      g.name => "keyed by ${g.hash_key}, not the table's partition key ${var.tables[usage].hash_key} (envs/tables.yaml)"
      if g.hash_key != var.tables[usage].hash_key
    }, try(cfg.cross_tenant_indexes, {}))
  }) }

  product_scope        = local.access.product_scope
  tenant_tag_key       = local.access.tenant_tag_key
  max_session_duration = local.access.max_session_duration

  create_roles                = local.access.create_roles
  trusted_principal_arns      = local.access.trusted_principal_arns
  role_trusted_principal_arns = local.access.role_trusted_principal_arns
  account_root_trust_reason   = local.access.account_root_trust_reason
  permissions_boundary_arn    = local.access.permissions_boundary_arn != null ? local.access.permissions_boundary_arn : var.permissions_boundary_arn
  health_check_ids            = local.access.health_check_ids
  fis_experiment_template_ids = local.access.fis_experiment_template_ids

  tags = var.tags
}

# The access input with its defaults (variables.tf refuses keys not listed
# here). One list per level; the tenant table keys are the attributes of
# modules/dynamodb-access's tenant_tables.
locals {
  access_keys       = ["account_id", "tenant_tables", "product_scope", "tenant_tag_key", "max_session_duration", "create_roles", "trusted_principal_arns", "role_trusted_principal_arns", "account_root_trust_reason", "permissions_boundary_arn", "health_check_ids", "fis_experiment_template_ids"]
  tenant_table_keys = ["key_prefix", "index_key_delimiter", "cross_tenant_indexes"]
  access = var.access == null ? null : {
    account_id                  = var.access.account_id
    tenant_tables               = try(var.access.tenant_tables, {})
    product_scope               = try(var.access.product_scope, false)
    tenant_tag_key              = try(var.access.tenant_tag_key, "tenant_id")
    max_session_duration        = try(var.access.max_session_duration, 3600)
    create_roles                = try(var.access.create_roles, false)
    trusted_principal_arns      = try(var.access.trusted_principal_arns, [])
    role_trusted_principal_arns = try(var.access.role_trusted_principal_arns, {})
    account_root_trust_reason   = try(var.access.account_root_trust_reason, null)
    permissions_boundary_arn    = try(var.access.permissions_boundary_arn, null)
    health_check_ids            = try(var.access.health_check_ids, [])
    fis_experiment_template_ids = try(var.access.fis_experiment_template_ids, [])
  }
}
