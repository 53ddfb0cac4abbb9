variable "env" {
  description = "Environment (DDB-NAME-01): the first word of every table name."
  type        = string
}

variable "product" {
  description = "Product that owns the tables (DDB-NAME-01)."
  type        = string
}

variable "tables" {
  description = <<-EOT
    The product's tables (envs/tables.yaml), keyed by usage (the last part of the name, DDB-NAME-01). Each entry takes
    every input of modules/dynamodb-table (hash_key, attributes, global_secondary_indexes, billing_mode with
    provisioned_reason, local_secondary_indexes, point_in_time_recovery with point_in_time_recovery_reason, stream_view_type with its
    reason, ttl_enabled with ttl_reason, deletion_protection_enabled with its reason, name_override with its reason,
    ...) and replica_regions (created with modules/dynamodb-table-replica in the env root). Unset keys take the
    guideline defaults; an unknown key (also inside an index, point_in_time_recovery, autoscaling, ...) is refused,
    naming the table and the key, instead of being dropped (DDB-EXC-01).
  EOT
  type        = any

  validation {
    condition     = can(keys(var.tables)) && length(var.tables) > 0 && alltrue([for u, t in var.tables : can(keys(t))])
    error_message = "DDB-NAME-01: tables (envs/tables.yaml) must map each usage (e.g. \"user\") to its settings, with at least one table."
  }

  validation {
    condition = length(!can(keys(var.tables)) ? [] : concat(
      flatten([for u, t in var.tables : [for k in try(keys(t), []) :
        "table \"${u}\": unknown key \"${k}\"" if !contains(local.table_keys, k)
      ]]),
      flatten([for u, t in var.tables : [for list, allowed in local.nested_keys : [for i, item in try(t[list], []) : [
        for k in try(keys(item), ["(not a map)"]) : "table \"${u}\": unknown key \"${k}\" in ${list}[${i}]${try(" (${item.name})", "")}" if !contains(allowed, k)
      ]]]]),
      flatten([for u, t in var.tables : [for obj, allowed in local.object_keys : [
        for k in try(keys(t[obj]), []) : "table \"${u}\": unknown key \"${k}\" in ${obj}" if !contains(allowed, k)
      ]]]),
    )) == 0
    error_message = "DDB-EXC-01: envs/tables.yaml: ${join("; ", !can(keys(var.tables)) ? [] : concat(flatten([for u, t in var.tables : [for k in try(keys(t), []) : "table \"${u}\": unknown key \"${k}\" (known keys: ${join(", ", local.table_keys)})" if !contains(local.table_keys, k)]]), flatten([for u, t in var.tables : [for list, allowed in local.nested_keys : [for i, item in try(t[list], []) : [for k in try(keys(item), ["(not a map)"]) : "table \"${u}\": unknown key \"${k}\" in ${list}[${i}]${try(" (${item.name})", "")} (known keys: ${join(", ", allowed)})" if !contains(allowed, k)]]]]), flatten([for u, t in var.tables : [for obj, allowed in local.object_keys : [for k in try(keys(t[obj]), []) : "table \"${u}\": unknown key \"${k}\" in ${obj} (known keys: ${join(", ", allowed)})${lookup(local.moved_keys, "${obj}.${k}", "") == "" ? "" : "; since v2.0.0 it is ${local.moved_keys["${obj}.${k}"]}, beside ${obj}"}" if !contains(allowed, k)]]]), ))}. Every setting must be one modules/dynamodb-table knows (see docs/tables-yaml.md); a misspelt key would otherwise be dropped and the guideline default used silently."
  }
  validation {
    condition     = !can(keys(var.tables)) || alltrue([for u, t in var.tables : !can(t.envs) || can([for e in t.envs : regex("^[a-z][a-z0-9]*$", e)]) && length(try(t.envs, [])) > 0])
    error_message = "DDB-NAME-01: envs/tables.yaml: ${join("; ", !can(keys(var.tables)) ? [] : [for u, t in var.tables : "table \"${u}\": envs must be a non-empty list of env names (e.g. envs: [prod])" if can(t.envs) && !(can([for e in t.envs : regex("^[a-z][a-z0-9]*$", e)]) && length(try(t.envs, [])) > 0)])}; leave envs out for a table in every env."
  }
}

variable "contributor_insights_enabled" {
  description = "Contributor Insights on every table and GSI. The local emulator cannot apply it: set false there."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags added to every resource (merged under the standard tags)."
  type        = map(string)
  default     = {}
}

variable "access" {
  description = <<-EOT
    IAM policies (and optionally roles) for the tables (modules/dynamodb-access, DDB-SEC-01..03); null: none.
    tenant_tables is keyed by usage, e.g. `{ order = { key_prefix = "TENANT#", index_key_delimiter = "#" } }` (DDB-SEC-02).
    health_check_ids: this env's Route 53 health checks (modules/dr output), the only ones the operator may read and invert;
    fis_experiment_template_ids: this env's FIS templates (modules/dr output), the only ones the operator may start.
    Keys (an unknown one is refused): account_id (required), tenant_tables ({}; each with key_prefix "", index_key_delimiter,
    cross_tenant_indexes {}), product_scope (false), tenant_tag_key ("tenant_id"), max_session_duration (3600),
    create_roles (false), trusted_principal_arns ([]), role_trusted_principal_arns ({}), account_root_trust_reason,
    permissions_boundary_arn, health_check_ids ([]), fis_experiment_template_ids ([]); each as in modules/dynamodb-access.
  EOT
  # any, not an object type: Terraform would drop a misspelt attribute in
  # conversion (a permissions_boundary_arn typo would create roles without
  # one). Keys are checked below; local.access applies the defaults.
  type    = any
  default = null

  validation {
    condition = var.access == null || length(concat(
      [for k in try(keys(var.access), ["(not a map)"]) : k if !contains(local.access_keys, k)],
      flatten([for u, cfg in try(var.access.tenant_tables, {}) : [for k in try(keys(cfg), ["(not a map)"]) : k if !contains(local.tenant_table_keys, k)]]),
    )) == 0
    error_message = "DDB-SEC-02: access: ${join("; ", var.access == null ? [] : concat([for k in try(keys(var.access), ["(not a map)"]) : "unknown key \"${k}\" (known keys: ${join(", ", local.access_keys)})" if !contains(local.access_keys, k)], flatten([for u, cfg in try(var.access.tenant_tables, {}) : [for k in try(keys(cfg), ["(not a map)"]) : "unknown key \"${k}\" in tenant_tables.${u} (known keys: ${join(", ", local.tenant_table_keys)})" if !contains(local.tenant_table_keys, k)]])))}. A misspelt setting would otherwise be dropped and its default used silently (the access input of modules/dynamodb-stack, set in the env root's main.tf)."
  }

  validation {
    condition     = var.access == null || try(length(var.access.account_id) > 0, false)
    error_message = "DDB-SEC-03: access.account_id is required: the 12-digit account ID of the env (a plan must not ask STS for it)."
  }

  validation {
    condition     = var.access == null || alltrue([for u in keys(try(var.access.tenant_tables, {})) : contains(keys(var.tables), u)])
    error_message = "DDB-SEC-02: access.tenant_tables must be keyed by usages listed in tables (e.g. \"order\")."
  }
}

variable "export_enabled" {
  description = "Create the export bucket (modules/dynamodb-export) for the stack's tables (DDB-EXP-01)."
  type        = bool
  default     = false
}

variable "export_schedule_enabled" {
  description = "Scheduled gap-free incremental exports of every table (needs export_enabled and export_scheduler_zip_path)."
  type        = bool
  default     = false
}

variable "export_scheduler_zip_path" {
  description = "The scheduler Lambda zip from `make export-scheduler-zip`, when export_schedule_enabled."
  type        = string
  default     = null
}

variable "export_alarm_actions" {
  description = "SNS topic ARNs for the export alarms (behind, failed, gap, scheduler errors); empty: the env's alarm topic."
  type        = list(string)
  default     = []
}

variable "export_force_destroy" {
  description = "Let destroy delete an export bucket that still holds exports (throw-away environments only)."
  type        = bool
  default     = false
}

variable "export_tls_only_disabled_reason" {
  description = "Why the export bucket may be reached without TLS (the local emulator only); empty keeps the TLS-only deny."
  type        = string
  default     = ""
}

variable "account_id" {
  description = "AWS account ID of the env (the alarm topic's key policy names it); null: access.account_id. One of them is needed when the stack creates the alarm topic."
  type        = string
  default     = null

  validation {
    condition     = var.account_id == null || can(regex("^[0-9]{12}$", coalesce(var.account_id, "x")))
    error_message = "DDB-SEC-04: account_id must be the 12-digit AWS account ID of the env (e.g. \"123456789012\")."
  }

  validation {
    condition     = var.account_id != null || try(var.access.account_id, null) != null || var.alarm_sns_topic_arn != null
    error_message = "DDB-SEC-04: the stack's alarm topic is encrypted with a customer managed key whose policy names the account: set account_id (or access.account_id), or pass alarm_sns_topic_arn."
  }
}

variable "alarm_topic_kms_key_arn" {
  description = "A customer managed key of your own for the alarm topic the stack creates (its policy must let cloudwatch.amazonaws.com use it); null: the stack creates one (modules/alarm-topic)."
  type        = string
  default     = null
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic for every alarm of the stack (DDB-MON-01, DDB-STREAM-05); null: the stack creates `{env}-{product}-dynamodb-alarms`."
  type        = string
  default     = null
}

variable "account_alarms_enabled" {
  description = "Create the account-level DynamoDB alarms (UserErrors, AccountProvisioned*CapacityUtilization), named `{env}-dynamodb-account-*`, apart from any table (module.account_alarms: adding a table never moves them). Keep it on in exactly one stack per account and region."
  type        = bool
  default     = true
}

variable "alarm_overrides" {
  description = "Overrides of the alarm defaults for every table (the `alarms` input of modules/dynamodb-alarms)."
  type = map(object({
    enabled             = optional(bool)
    threshold           = optional(number)
    period              = optional(number)
    evaluation_periods  = optional(number)
    datapoints_to_alarm = optional(number)
    treat_missing_data  = optional(string)
  }))
  default = {}
}

variable "throttle_cause_alarms" {
  description = "Per-cause throttle alarms for every table (the `throttle_cause_alarms` input of modules/dynamodb-alarms; off by default). max_on_demand is on anyway for a table with an on_demand_throughput maximum (DDB-CAP-04)."
  type = object({
    key_range     = optional(bool, false)
    max_on_demand = optional(bool, false)
    account_limit = optional(bool, false)
  })
  default  = {}
  nullable = false
}

variable "protected_envs" {
  description = "Envs whose on-demand tables need a cost ceiling, on_demand_throughput or on_demand_throughput_reason (DDB-CAP-04; the `protected_envs` input of modules/dynamodb-table)."
  type        = list(string)
  default     = ["prod", "production", "prd", "live", "prod1", "prod2", "prd1", "prd2"]
  nullable    = false
}

variable "stream_consumer" {
  description = <<-EOT
    The Lambda consumer deployed on every table with streams (modules/stream-consumer, DDB-STREAM-04): filename is the
    zip built by `make consumer-zip`. null: no consumers. accept_poison is the DLQ drill's fix.
  EOT
  type = object({
    filename                      = string
    source_code_hash              = optional(string)
    accept_poison                 = optional(bool, false)
    filter_patterns               = optional(list(string), [])
    maximum_retry_attempts        = optional(number, 3)
    maximum_record_age_in_seconds = optional(number, 3600)
  })
  default = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary set on every role the stack creates (stream consumers, the export scheduler, the access roles unless access.permissions_boundary_arn names another)."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", coalesce(var.permissions_boundary_arn, "x")))
    error_message = "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null."
  }
}
