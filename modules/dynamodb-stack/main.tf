# One product's DynamoDB tables in one environment, each through
# modules/dynamodb-table with the guideline's defaults. Monitoring, stream
# consumers, exports, access and DR building blocks are added per concern in
# files of their own beside this one. Every key of a tables.yaml entry is an
# input of modules/dynamodb-table (tables.tf checks the keys); a key left out
# is passed as null, which takes the module's default.

module "table" {
  source   = "../dynamodb-table"
  for_each = local.tables

  env     = var.env
  product = var.product
  usage   = each.key

  name_override        = try(each.value.name_override, null)
  name_override_reason = try(each.value.name_override_reason, null)

  hash_key                 = each.value.hash_key
  range_key                = try(each.value.range_key, null)
  key_naming_reason        = try(each.value.key_naming_reason, null)
  index_naming_reason      = try(each.value.index_naming_reason, null)
  attributes               = each.value.attributes
  global_secondary_indexes = try(each.value.global_secondary_indexes, null)
  local_secondary_indexes  = try(each.value.local_secondary_indexes, null)
  allow_projection_all     = try(each.value.allow_projection_all, null)
  projection_all_reason    = try(each.value.projection_all_reason, null)

  billing_mode                = try(each.value.billing_mode, null)
  provisioned_reason          = try(each.value.provisioned_reason, null)
  read_capacity               = try(each.value.read_capacity, null)
  write_capacity              = try(each.value.write_capacity, null)
  autoscaling                 = try(each.value.autoscaling, null)
  autoscaling_disabled_reason = try(each.value.autoscaling_disabled_reason, null)
  on_demand_throughput        = try(each.value.on_demand_throughput, null)
  on_demand_throughput_reason = try(each.value.on_demand_throughput_reason, null)
  protected_envs              = var.protected_envs
  table_class                 = try(each.value.table_class, null)

  deletion_protection_enabled         = try(each.value.deletion_protection_enabled, null)
  deletion_protection_disabled_reason = try(each.value.deletion_protection_disabled_reason, null)
  point_in_time_recovery              = try(each.value.point_in_time_recovery, null)
  point_in_time_recovery_reason       = try(each.value.point_in_time_recovery_reason, null)

  stream_enabled          = try(each.value.stream_enabled, null)
  stream_view_type        = try(each.value.stream_view_type, null)
  stream_view_type_reason = try(each.value.stream_view_type_reason, null)
  ttl_enabled             = try(each.value.ttl_enabled, null)
  ttl_attribute_name      = try(each.value.ttl_attribute_name, null)
  ttl_reason              = try(each.value.ttl_reason, null)

  kms_key_arn             = try(each.value.kms_key_arn, null)
  aws_managed_key_enabled = try(each.value.aws_managed_key_enabled, null)
  resource_policy         = try(each.value.resource_policy, null)
  timeouts                = try(each.value.timeouts, null)

  contributor_insights_enabled = coalesce(try(each.value.contributor_insights_enabled, null), var.contributor_insights_enabled)

  tags = merge(var.tags, try(each.value.tags, {}))
}
