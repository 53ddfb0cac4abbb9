locals {
  # One definition of a reason that says why, shared with the Rego policies
  # (policies/data.json) and `dynops check` (internal/guideline/reason.go); a
  # test keeps the three equal. A placeholder (adopt's "TODO adopt: say why",
  # FIXME, TBD, XXX) or fewer than three letters or digits is refused.
  reason_placeholder = "(?i)(^|[^\\p{L}\\p{N}])(todo|fixme|tbd|xxx)([^\\p{L}\\p{N}]|$)"
  reason_substance   = "([\\p{L}\\p{N}][^\\p{L}\\p{N}]*){3}"

  # DDB-NAME-01: {env}-{product}-{usage}; a legacy name only through
  # name_override with its reason (the exception is tagged like every other).
  standard_name = "${var.env}-${var.product}-${var.usage}"
  name          = var.name_override == null ? local.standard_name : var.name_override

  provisioned = var.billing_mode == "PROVISIONED"
  # DDB-CAP-04: an on-demand maximum for reads and writes (the cost ceiling).
  cost_ceiling = !local.provisioned && try(var.on_demand_throughput.max_read_request_units > 0, false) && try(var.on_demand_throughput.max_write_request_units > 0, false)
  # Auto scaling owns the capacity of a PROVISIONED table and its GSIs once on.
  autoscaled = local.provisioned && var.autoscaling.enabled

  # Every exception to a guideline default is written on the table as a tag
  # `dynops:exception:<RULE-ID>` so that it shows in the plan and `dynops check`
  # reports it as an exception rather than a failure. Tag values allow only
  # letters, digits, spaces and _ . : / = + - @, so the reason is cleaned; the
  # reason variables refuse text that would clean to nothing (no letter or digit).
  exception_reasons = {
    "DDB-NAME-01" = var.name_override == null ? "" : var.name_override_reason
    "DDB-CAP-01"  = local.provisioned ? "provisioned: ${var.provisioned_reason}${var.autoscaling.enabled ? "" : "; no autoscaling: ${var.autoscaling_disabled_reason}"}" : ""
    "DDB-IDX-02"  = var.allow_projection_all ? var.projection_all_reason : ""
    "DDB-NAME-02" = var.index_naming_reason == null ? "" : var.index_naming_reason
    # DDB-NAME-03 covers key names (key_naming_reason) and TTL (ttl_reason).
    "DDB-NAME-03" = join("; ", compact([
      var.key_naming_reason == null ? "" : var.key_naming_reason,
      var.ttl_enabled && var.ttl_attribute_name == "ttl" ? "" : var.ttl_reason,
    ]))
    "DDB-PITR-01"   = var.point_in_time_recovery.enabled && var.point_in_time_recovery.recovery_period_in_days == 35 ? "" : var.point_in_time_recovery_reason
    "DDB-PROT-01"   = var.deletion_protection_enabled ? "" : var.deletion_protection_disabled_reason
    "DDB-CAP-04"    = local.provisioned || local.cost_ceiling ? "" : var.on_demand_throughput_reason
    "DDB-STREAM-01" = var.stream_enabled && var.stream_view_type != "NEW_AND_OLD_IMAGES" ? var.stream_view_type_reason : ""
  }
  exceptions = { for rule, reason in local.exception_reasons :
    rule => substr(trimspace(replace(reason, "/[^\\p{L}\\p{N}\\s_.:/=+@-]/", " ")), 0, 256) if trimspace(reason) != ""
  }

  # The key schema, in the dynops:key-schema tag for readers of the table
  # (`dynops check`, people). The record a change is refused against is
  # terraform_data.key_schema (DDB-IDX-01), so the tag always equals it: it is
  # not in ignore_changes, which gives an adopted (imported) table its tag on
  # the first apply and restores a tag edited outside Terraform (docs/day2.md).
  key_schema = join(" ", concat(
    ["hash=${var.hash_key}", "range=${coalesce(var.range_key, "-")}"],
    sort([for l in var.local_secondary_indexes : "${l.name}=${l.range_key}"]),
  ))

  tags = merge(
    var.tags,
    { for rule, reason in local.exceptions : "dynops:exception:${rule}" => reason },
    {
      env                 = var.env
      product             = var.product
      usage               = var.usage
      "managed-by"        = "terraform"
      "dynops:key-schema" = local.key_schema
    },
  )

  gsi_by_name = { for g in var.global_secondary_indexes : g.name => g }

  # Auto scaling targets: the table and every GSI, read and write (DDB-CAP-01),
  # each with its own minimum and maximum.
  autoscaling_targets = local.autoscaled ? merge(
    { for dim in ["read", "write"] : "table-${dim}" => {
      resource_id = "table/${local.name}"
      dimension   = "dynamodb:table:${title(dim)}CapacityUnits"
      min         = dim == "read" ? var.read_capacity : var.write_capacity
      max = coalesce(
        dim == "read" ? var.autoscaling.read_max_capacity : var.autoscaling.write_max_capacity,
        ceil((dim == "read" ? var.read_capacity : var.write_capacity) * var.autoscaling.max_capacity_ratio),
      )
    } },
    merge([for g in var.global_secondary_indexes : { for dim in ["read", "write"] : "${g.name}-${dim}" => {
      resource_id = "table/${local.name}/index/${g.name}"
      dimension   = "dynamodb:index:${title(dim)}CapacityUnits"
      min         = coalesce(dim == "read" ? g.read_capacity : g.write_capacity, dim == "read" ? var.read_capacity : var.write_capacity)
      max = coalesce(
        dim == "read" ? g.read_max_capacity : g.write_max_capacity,
        dim == "read" ? var.autoscaling.read_max_capacity : var.autoscaling.write_max_capacity,
        ceil(coalesce(dim == "read" ? g.read_capacity : g.write_capacity, dim == "read" ? var.read_capacity : var.write_capacity) * var.autoscaling.max_capacity_ratio),
      )
    } }]...),
  ) : {}

  # With auto scaling on, the capacity to plan is what auto scaling has set
  # (read from the live table), kept inside the configured [min, max]: a plan
  # never resets an autoscaled table or GSI to its minimum (bug: GSI capacity
  # reset on every apply), yet raising the minimum takes effect at once. A
  # new table, a new GSI or a switch from on-demand starts at the minimum.
  # Without auto scaling, the configured capacity is applied as written.
  # ListTables of an account without tables gives null names.
  live_names = try(coalescelist(data.aws_dynamodb_tables.all[0].names, []), [])
  live_table = try(data.aws_dynamodb_table.live[0], null)
  live_gsi   = { for g in try(local.live_table.global_secondary_index, []) : g.name => g }
  capacity = { for k, t in local.autoscaling_targets : k => max(t.min, min(t.max, try(
    k == "table-read" ? local.live_table.read_capacity :
    k == "table-write" ? local.live_table.write_capacity :
    endswith(k, "-read") ? local.live_gsi[trimsuffix(k, "-read")].read_capacity :
    local.live_gsi[trimsuffix(k, "-write")].write_capacity,
  0))) }
}

# Read only for autoscaled tables: whether the table exists, then its live capacity.
data "aws_dynamodb_tables" "all" {
  count = local.autoscaled ? 1 : 0
}

data "aws_dynamodb_table" "live" {
  count = local.autoscaled && contains(local.live_names, local.name) ? 1 : 0

  name = local.name
}

resource "aws_dynamodb_table" "this" {
  name         = local.name
  billing_mode = var.billing_mode
  hash_key     = var.hash_key
  range_key    = var.range_key
  table_class  = var.table_class

  # On-demand: 0, which the provider's plan check reads as "not set" (it
  # refuses a non-zero capacity with PAY_PER_REQUEST). With null it would keep
  # the capacity last read, and a service that still reports the provisioned
  # capacity after a switch to on-demand fails every later plan with
  # "read_capacity can not be set when billing_mode is PAY_PER_REQUEST" (bug 2).
  # null beside on_demand_throughput, which the provider says conflicts with it.
  read_capacity  = local.provisioned ? (local.autoscaled ? local.capacity["table-read"] : var.read_capacity) : (var.on_demand_throughput == null ? 0 : null)
  write_capacity = local.provisioned ? (local.autoscaled ? local.capacity["table-write"] : var.write_capacity) : (var.on_demand_throughput == null ? 0 : null)

  # On-demand cost guard (DDB-CAP-01): the most request units per second.
  dynamic "on_demand_throughput" {
    for_each = !local.provisioned && var.on_demand_throughput != null ? [var.on_demand_throughput] : []
    content {
      max_read_request_units  = on_demand_throughput.value.max_read_request_units
      max_write_request_units = on_demand_throughput.value.max_write_request_units
    }
  }

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
      name     = global_secondary_index.value.name
      hash_key = global_secondary_index.value.hash_key
      # The provider stores a missing GSI sort key as "" in state; null here would make every
      # GSI without a sort key show as destroyed and re-added whenever the GSI set changes.
      range_key          = global_secondary_index.value.range_key == null ? "" : global_secondary_index.value.range_key
      projection_type    = global_secondary_index.value.projection_type
      non_key_attributes = global_secondary_index.value.projection_type == "INCLUDE" ? global_secondary_index.value.non_key_attributes : null
      read_capacity = !local.provisioned ? null : (local.autoscaled ? local.capacity["${global_secondary_index.value.name}-read"] :
      coalesce(global_secondary_index.value.read_capacity, var.read_capacity))
      write_capacity = !local.provisioned ? null : (local.autoscaled ? local.capacity["${global_secondary_index.value.name}-write"] :
      coalesce(global_secondary_index.value.write_capacity, var.write_capacity))

      dynamic "on_demand_throughput" {
        for_each = !local.provisioned && (global_secondary_index.value.max_read_request_units != null || global_secondary_index.value.max_write_request_units != null) ? [1] : []
        content {
          max_read_request_units  = global_secondary_index.value.max_read_request_units
          max_write_request_units = global_secondary_index.value.max_write_request_units
        }
      }
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

  # DDB-SEC-04: no block means the AWS owned key; the AWS managed key
  # (alias/aws/dynamodb) or a customer managed key when a compliance rule asks.
  dynamic "server_side_encryption" {
    for_each = var.kms_key_arn == null && !var.aws_managed_key_enabled ? [] : [var.kms_key_arn]
    content {
      enabled     = true
      kms_key_arn = server_side_encryption.value
    }
  }

  dynamic "timeouts" {
    for_each = var.timeouts == null ? [] : [var.timeouts]
    content {
      create = timeouts.value.create
      update = timeouts.value.update
      delete = timeouts.value.delete
    }
  }

  tags = local.tags

  lifecycle {
    # Replicas are aws_dynamodb_table_replica resources (modules/dynamodb-table-replica):
    # inline replicas cannot carry deletion protection (DDB-PROT-01).
    ignore_changes = [replica]

    # A range key or an LSI added or changed replaces the table (DDB-IDX-01).
    # The key schema the table was created with is kept in
    # terraform_data.key_schema: a postcondition on the table's own tag cannot
    # see it, since a replacement is planned from the configuration alone.
    # The readiness run (modules/dynamodb-readiness) restores into
    # `<env>-dynops-restoretest-<unix>` and deletes such tables: the prefix is
    # reserved for them, in every env.
    precondition {
      condition     = !can(regex("^[a-z][a-z0-9]*-dynops-restoretest-", local.name))
      error_message = "DDB-NAME-01: table ${local.name}: names starting with `<env>-dynops-restoretest-` are reserved for the readiness run's throwaway restore-test tables (modules/dynamodb-readiness deletes them); choose another product or usage (e.g. usage \"restore-test-log\"), or another name_override."
    }

    precondition {
      condition     = terraform_data.key_schema.output == local.key_schema
      error_message = "DDB-IDX-01: table ${local.name}: the key schema would change from \"${terraform_data.key_schema.output}\" to \"${local.key_schema}\" (hash key, range key or an LSI changed), which replaces the table and loses its data. Keep the keys, and migrate to a new table instead: runbooks/table-migration.md and `dynops migrate` (docs/guideline.md#ddb-idx-01)."
    }
  }
}

# The key schema the table was created with (DDB-IDX-01): kept as first
# planned; the table's precondition refuses a plan that would change it.
resource "terraform_data" "key_schema" {
  input = local.key_schema

  lifecycle {
    ignore_changes = [input]
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
  max_capacity       = each.value.max

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
    target_value       = var.autoscaling.target_utilization
    scale_in_cooldown  = var.autoscaling.scale_in_cooldown
    scale_out_cooldown = var.autoscaling.scale_out_cooldown

    predefined_metric_specification {
      predefined_metric_type = strcontains(each.value.dimension, "Read") ? "DynamoDBReadCapacityUtilization" : "DynamoDBWriteCapacityUtilization"
    }
  }
}
