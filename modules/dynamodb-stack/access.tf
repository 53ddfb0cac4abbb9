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
  account_id = var.access.account_id

  application_tables = [for t in module.table : t.table_name]
  # Every GSI of a tenant table that is not keyed by the table's partition
  # key (the tenant key) is denied to the tenant role (DenyCrossTenantIndexes):
  # dynamodb:LeadingKeys bounds only the key a request names, so such an index
  # could return another tenant's items. Derived from the table definition,
  # not from an opt-in tag or list; cross_tenant_indexes adds its reasons.
  tenant_tables = { for usage, cfg in var.access.tenant_tables : module.table[usage].table_name => merge(cfg, {
    cross_tenant_indexes = merge({
      for g in try(var.tables[usage].global_secondary_indexes, []) :
      g.name => "keyed by ${g.hash_key}, not the table's partition key ${var.tables[usage].hash_key} (envs/tables.yaml)"
      if g.hash_key != var.tables[usage].hash_key
    }, cfg.cross_tenant_indexes)
  }) }

  product_scope        = var.access.product_scope
  tenant_tag_key       = var.access.tenant_tag_key
  max_session_duration = var.access.max_session_duration

  create_roles                = var.access.create_roles
  trusted_principal_arns      = var.access.trusted_principal_arns
  role_trusted_principal_arns = var.access.role_trusted_principal_arns
  account_root_trust_reason   = var.access.account_root_trust_reason
  permissions_boundary_arn    = var.access.permissions_boundary_arn
  health_check_ids            = var.access.health_check_ids

  tags = var.tags
}
