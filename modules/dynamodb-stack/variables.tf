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
    The product's tables, keyed by usage (the last part of the name, DDB-NAME-01). Each entry takes the
    inputs of modules/dynamodb-table that differ per table; everything else is the guideline default.
  EOT
  type = map(object({
    hash_key          = string
    range_key         = optional(string)
    key_naming_reason = optional(string) # DDB-NAME-03 exception: keys that are not snake_case
    attributes = list(object({
      name = string
      type = string
    }))
    global_secondary_indexes = optional(list(object({
      name               = string
      hash_key           = string
      range_key          = optional(string)
      projection_type    = optional(string, "INCLUDE")
      non_key_attributes = optional(list(string), [])
    })), [])
    stream_enabled = optional(bool, true)
    point_in_time_recovery = optional(object({
      enabled                 = optional(bool, true)
      recovery_period_in_days = optional(number, 35)
      reason                  = optional(string, "")
    }), {})
    kms_key_arn     = optional(string)
    replica_regions = optional(list(string), [])
    table_class     = optional(string, "STANDARD")
    tags            = optional(map(string), {})
  }))

  validation {
    condition     = length(var.tables) > 0
    error_message = "DDB-NAME-01: tables must name at least one table (keyed by usage, e.g. \"user\")."
  }
}

variable "replicas_enabled" {
  description = "Create the global-table replicas listed in replica_regions (DDB-DR-01). The local emulator cannot: set false there."
  type        = bool
  default     = true
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
    health_check_ids: this env's Route 53 health checks (modules/dr output), the only ones the operator may read and invert.
  EOT
  type = object({
    account_id = string
    tenant_tables = optional(map(object({
      key_prefix          = optional(string, "")
      index_key_delimiter = optional(string)
    })), {})
    create_roles             = optional(bool, false)
    trusted_principal_arns   = optional(list(string), [])
    permissions_boundary_arn = optional(string)
    health_check_ids         = optional(list(string), [])
  })
  default = null

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
  description = "SNS topic ARNs for the export alarms (behind, failed, gap, scheduler errors)."
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

variable "alarm_sns_topic_arn" {
  description = "SNS topic for every alarm of the stack (DDB-MON-01, DDB-STREAM-05); null: the stack creates `{env}-{product}-dynamodb-alarms`."
  type        = string
  default     = null
}

variable "account_alarms_enabled" {
  description = "Create the account-level DynamoDB alarms (UserErrors, AccountProvisioned*CapacityUtilization) with this stack's first table. Keep it on in exactly one stack per account and region."
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
