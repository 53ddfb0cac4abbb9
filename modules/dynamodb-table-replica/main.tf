# One replica of a global table (DDB-DR-01 pattern 4) in the region of the
# provider this module is given, with deletion protection (DDB-PROT-01) and
# the table's PITR (DDB-PITR-01). Inline replica blocks of aws_dynamodb_table
# cannot set deletion protection, so modules/dynamodb-table creates none and
# ignores the table's replica set; replicas live here, one call per region.

data "aws_region" "this" {}

locals {
  # One definition of a reason that says why, shared with the Rego policies
  # (policies/data.json) and `dynops check` (internal/guideline/reason.go); a
  # test keeps the three equal. A placeholder (adopt's "TODO adopt: say why",
  # FIXME, TBD, XXX) or fewer than three letters or digits is refused.
  reason_placeholder = "(?i)(^|[^\\p{L}\\p{N}])(todo|fixme|tbd|xxx)([^\\p{L}\\p{N}]|$)"
  reason_substance   = "([\\p{L}\\p{N}][^\\p{L}\\p{N}]*){3}"

  exceptions = { for rule, reason in {
    "DDB-PROT-01" = var.deletion_protection_enabled ? "" : var.deletion_protection_disabled_reason
  } : rule => substr(trimspace(replace(reason, "/[^\\p{L}\\p{N}\\s_.:/=+@-]/", " ")), 0, 256) if trimspace(reason) != "" }

  # The table's tags (its standard tags and its exceptions, e.g. PITR off for
  # a work table) and this replica's own exceptions.
  tags = merge(
    { for k, v in var.table_tags : k => v if k != "dynops:key-schema" },
    { for rule, reason in local.exceptions : "dynops:exception:${rule}" => reason },
  )
}

resource "aws_dynamodb_table_replica" "this" {
  global_table_arn = var.global_table_arn

  deletion_protection_enabled = var.deletion_protection_enabled
  point_in_time_recovery      = var.point_in_time_recovery.enabled
  kms_key_arn                 = var.kms_key_arn
  table_class_override        = var.table_class_override

  dynamic "timeouts" {
    for_each = var.timeouts == null ? [] : [var.timeouts]
    content {
      create = timeouts.value.create
      update = timeouts.value.update
      delete = timeouts.value.delete
    }
  }

  tags = local.tags
}

# The replica's stream (read after the replica exists), for consumers in this region.
data "aws_dynamodb_table" "replica" {
  name = var.table_name

  depends_on = [aws_dynamodb_table_replica.this]
}
