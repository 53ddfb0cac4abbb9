locals {
  # DDB-NAME-01: {env}-{product}-{usage}
  name = "${var.env}-${var.product}-${var.usage}"

  provisioned = var.billing_mode == "PROVISIONED"

  # Every exception to a guideline default is written on the table as a tag
  # `dynops:exception:<RULE-ID>` so that it shows in the plan and `dynops check`
  # reports it as an exception rather than a failure. Tag values allow only
  # letters, digits, spaces and _ . : / = + - @, so the reason is cleaned.
  exceptions = { for rule, reason in {
    "DDB-CAP-01"    = local.provisioned ? "provisioned: ${var.provisioned_reason}${var.autoscaling.enabled ? "" : "; no autoscaling: ${var.autoscaling_disabled_reason}"}" : ""
    "DDB-IDX-02"    = var.allow_projection_all ? var.projection_all_reason : ""
    "DDB-NAME-03"   = coalesce(var.key_naming_reason, " ")
    "DDB-PITR-01"   = var.point_in_time_recovery.enabled && var.point_in_time_recovery.recovery_period_in_days == 35 ? "" : var.point_in_time_recovery.reason
    "DDB-PROT-01"   = var.deletion_protection_enabled ? "" : var.deletion_protection_disabled_reason
    "DDB-STREAM-01" = var.stream_enabled && var.stream_view_type != "NEW_AND_OLD_IMAGES" ? var.stream_view_type_reason : ""
  } : rule => substr(trimspace(replace(reason, "/[^\\p{L}\\p{N}\\s_.:/=+@-]/", " ")), 0, 256) if trimspace(reason) != "" }

  tags = merge(
    var.tags,
    { for rule, reason in local.exceptions : "dynops:exception:${rule}" => reason },
    {
      env          = var.env
      product      = var.product
      usage        = var.usage
      "managed-by" = "terraform"
    },
  )

  gsi_by_name = { for g in var.global_secondary_indexes : g.name => g }

  # Auto scaling targets: the table and every GSI, read and write (DDB-CAP-01).
  autoscaling_targets = local.provisioned && var.autoscaling.enabled ? merge(
    { for dim in ["read", "write"] : "table-${dim}" => {
      resource_id = "table/${local.name}"
      dimension   = "dynamodb:table:${title(dim)}CapacityUnits"
      min         = dim == "read" ? var.read_capacity : var.write_capacity
    } },
    merge([for g in var.global_secondary_indexes : { for dim in ["read", "write"] : "${g.name}-${dim}" => {
      resource_id = "table/${local.name}/index/${g.name}"
      dimension   = "dynamodb:index:${title(dim)}CapacityUnits"
      min         = coalesce(dim == "read" ? g.read_capacity : g.write_capacity, dim == "read" ? var.read_capacity : var.write_capacity)
    } }]...),
  ) : {}
}

resource "aws_dynamodb_table" "this" {
  name         = local.name
  billing_mode = var.billing_mode
  hash_key     = var.hash_key
  range_key    = var.range_key
  table_class  = var.table_class

  read_capacity  = local.provisioned ? var.read_capacity : null
  write_capacity = local.provisioned ? var.write_capacity : null

  deletion_protection_enabled = var.deletion_protection_enabled

  stream_enabled   = var.stream_enabled
  stream_view_type = var.stream_enabled ? var.stream_view_type : null

  dynamic "attribute" {
    for_each = var.attributes
    content {
      name = attribute.value.name
      type = attribute.value.type
    }
  }

  dynamic "global_secondary_index" {
    for_each = var.global_secondary_indexes
    content {
      name               = global_secondary_index.value.name
      hash_key           = global_secondary_index.value.hash_key
      range_key          = global_secondary_index.value.range_key
      projection_type    = global_secondary_index.value.projection_type
      non_key_attributes = global_secondary_index.value.projection_type == "INCLUDE" ? global_secondary_index.value.non_key_attributes : null
      read_capacity      = local.provisioned ? coalesce(global_secondary_index.value.read_capacity, var.read_capacity) : null
      write_capacity     = local.provisioned ? coalesce(global_secondary_index.value.write_capacity, var.write_capacity) : null
    }
  }

  dynamic "local_secondary_index" {
    for_each = var.local_secondary_indexes
    content {
      name               = local_secondary_index.value.name
      range_key          = local_secondary_index.value.range_key
      projection_type    = local_secondary_index.value.projection_type
      non_key_attributes = local_secondary_index.value.projection_type == "INCLUDE" ? local_secondary_index.value.non_key_attributes : null
    }
  }

  point_in_time_recovery {
    enabled                 = var.point_in_time_recovery.enabled
    recovery_period_in_days = var.point_in_time_recovery.enabled ? var.point_in_time_recovery.recovery_period_in_days : null
  }

  ttl {
    enabled        = var.ttl_enabled
    attribute_name = var.ttl_enabled ? var.ttl_attribute_name : ""
  }

  # DDB-SEC-04: no block means the AWS owned key; a CMK when one is given.
  dynamic "server_side_encryption" {
    for_each = var.kms_key_arn == null ? [] : [var.kms_key_arn]
    content {
      enabled     = true
      kms_key_arn = server_side_encryption.value
    }
  }

  dynamic "replica" {
    for_each = var.replicas
    content {
      region_name            = replica.value.region
      kms_key_arn            = replica.value.kms_key_arn
      point_in_time_recovery = var.point_in_time_recovery.enabled
      propagate_tags         = true
    }
  }

  tags = local.tags

  lifecycle {
    # Auto scaling owns the capacity of PROVISIONED tables once it is on.
    ignore_changes = [read_capacity, write_capacity]
  }
}

resource "aws_dynamodb_contributor_insights" "table" {
  count = var.contributor_insights_enabled ? 1 : 0

  table_name = aws_dynamodb_table.this.name
}

resource "aws_dynamodb_contributor_insights" "gsi" {
  for_each = var.contributor_insights_enabled ? local.gsi_by_name : {}

  table_name = aws_dynamodb_table.this.name
  index_name = each.key
}

resource "aws_dynamodb_resource_policy" "this" {
  count = var.resource_policy == null ? 0 : 1

  resource_arn = aws_dynamodb_table.this.arn
  policy       = var.resource_policy
}

resource "aws_appautoscaling_target" "this" {
  for_each = local.autoscaling_targets

  service_namespace  = "dynamodb"
  resource_id        = each.value.resource_id
  scalable_dimension = each.value.dimension
  min_capacity       = each.value.min
  max_capacity       = ceil(each.value.min * var.autoscaling.max_capacity_ratio)

  tags = local.tags

  depends_on = [aws_dynamodb_table.this]
}

resource "aws_appautoscaling_policy" "this" {
  for_each = local.autoscaling_targets

  name               = "${local.name}-${each.key}"
  policy_type        = "TargetTrackingScaling"
  service_namespace  = aws_appautoscaling_target.this[each.key].service_namespace
  resource_id        = aws_appautoscaling_target.this[each.key].resource_id
  scalable_dimension = aws_appautoscaling_target.this[each.key].scalable_dimension

  target_tracking_scaling_policy_configuration {
    target_value = var.autoscaling.target_utilization

    predefined_metric_specification {
      predefined_metric_type = strcontains(each.value.dimension, "Read") ? "DynamoDBReadCapacityUtilization" : "DynamoDBWriteCapacityUtilization"
    }
  }
}
