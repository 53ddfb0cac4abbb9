# Global-table replicas (DDB-DR-01 pattern 4) of the tables with
# replica_regions in envs/tables.yaml: one modules/dynamodb-table-replica per
# table, with the secondary region's provider (aws.secondary, dr.tf), so each
# replica has deletion protection (DDB-PROT-01) and the table's PITR
# (DDB-PITR-01). A replica region other than the secondary one is refused at plan
# (the precondition of the replicas output).

module "replica" {
  source   = "../../modules/dynamodb-table-replica"
  for_each = module.stack.replicas

  providers = {
    aws = aws.secondary
  }

  table_name             = each.value.table_name
  global_table_arn       = each.value.global_table_arn
  point_in_time_recovery = each.value.point_in_time_recovery
  table_tags             = each.value.table_tags
  table_stream_view_type = each.value.table_stream_view_type
}
