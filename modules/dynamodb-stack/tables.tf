# envs/tables.yaml, checked key by key (DDB-EXC-01): every input of
# modules/dynamodb-table may be set per table (exceptions with their reasons),
# and a key the modules do not know is refused, naming the table and the key,
# instead of being dropped by type conversion.

locals {
  table_keys = [
    "hash_key", "range_key", "key_naming_reason", "index_naming_reason", "attributes", "global_secondary_indexes", "local_secondary_indexes",
    "allow_projection_all", "projection_all_reason",
    "billing_mode", "provisioned_reason", "read_capacity", "write_capacity", "autoscaling", "autoscaling_disabled_reason",
    "on_demand_throughput", "on_demand_throughput_reason", "table_class",
    "deletion_protection_enabled", "deletion_protection_disabled_reason", "point_in_time_recovery", "point_in_time_recovery_reason",
    "stream_enabled", "stream_view_type", "stream_view_type_reason",
    "ttl_enabled", "ttl_attribute_name", "ttl_reason",
    "kms_key_arn", "aws_managed_key_enabled", "contributor_insights_enabled", "resource_policy", "timeouts",
    "name_override", "name_override_reason", "tags", "replica_regions", "envs",
  ]
  nested_keys = {
    attributes               = ["name", "type"]
    global_secondary_indexes = ["name", "hash_key", "range_key", "projection_type", "non_key_attributes", "read_capacity", "write_capacity", "read_max_capacity", "write_max_capacity", "max_read_request_units", "max_write_request_units"]
    local_secondary_indexes  = ["name", "range_key", "projection_type", "non_key_attributes"]
  }
  object_keys = {
    point_in_time_recovery = ["enabled", "recovery_period_in_days"]
    autoscaling            = ["enabled", "max_capacity_ratio", "target_utilization", "read_max_capacity", "write_max_capacity", "scale_in_cooldown", "scale_out_cooldown"]
    on_demand_throughput   = ["max_read_request_units", "max_write_request_units"]
    timeouts               = ["create", "update", "delete"]
  }
  # Keys that moved in v2.0.0 (one shape for exception reasons: a flat
  # <input>_reason beside its input), named in the refusal.
  moved_keys = {
    "point_in_time_recovery.reason" = "point_in_time_recovery_reason"
  }

  # Usage to settings, as given (modules/dynamodb-table applies the defaults),
  # for the tables of this env: an entry's `envs` (e.g. [prod] for a table
  # adopted in prod only) scopes it; without `envs` it is in every env.
  tables = { for u, t in var.tables : u => t if !can(t.envs) || contains(try(tolist(t.envs), []), var.env) }
}
