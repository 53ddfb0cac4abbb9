# One product's DynamoDB tables in one environment, each through
# modules/dynamodb-table with the guideline's defaults. Monitoring, stream
# consumers, exports, access and DR building blocks are added per concern in
# files of their own beside this one.

module "table" {
  source   = "../dynamodb-table"
  for_each = var.tables

  env     = var.env
  product = var.product
  usage   = each.key

  hash_key                 = each.value.hash_key
  range_key                = each.value.range_key
  key_naming_reason        = each.value.key_naming_reason
  attributes               = each.value.attributes
  global_secondary_indexes = each.value.global_secondary_indexes
  stream_enabled           = each.value.stream_enabled
  point_in_time_recovery   = each.value.point_in_time_recovery
  kms_key_arn              = each.value.kms_key_arn
  table_class              = each.value.table_class
  replicas                 = var.replicas_enabled ? [for r in each.value.replica_regions : { region = r }] : []

  contributor_insights_enabled = var.contributor_insights_enabled

  tags = merge(var.tags, each.value.tags)
}
