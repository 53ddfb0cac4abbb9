################################################################################
# Naming (DDB-NAME-01)
################################################################################

variable "env" {
  description = "Environment the table belongs to; the first word of the table name (DDB-NAME-01). Must be one of allowed_envs."
  type        = string

  validation {
    condition     = contains(var.allowed_envs, var.env)
    error_message = "DDB-NAME-01: env \"${var.env}\" must be one of the allowed_envs input; set env to one of them or add the environment to allowed_envs."
  }
}

variable "allowed_envs" {
  description = "Environments a table name may start with (DDB-NAME-01)."
  type        = list(string)
  default     = ["local", "dev", "stg", "prod"]
  nullable    = false

  validation {
    condition     = length(var.allowed_envs) > 0 && alltrue([for e in var.allowed_envs : can(regex("^[a-z][a-z0-9]*$", e))])
    error_message = "DDB-NAME-01: allowed_envs must list at least one environment, each lower case letters and digits (e.g. \"dev\")."
  }
}

variable "product" {
  description = "Product (service) that owns the table; the second part of the table name `{env}-{product}-{usage}` (DDB-NAME-01)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)*$", var.product))
    error_message = "DDB-NAME-01: product \"${var.product}\" must be lower case words joined by '-' (e.g. \"fuga\" or \"order-api\"); no underscores, capitals or spaces."
  }
}

variable "usage" {
  description = "What the table holds; the last part of the table name `{env}-{product}-{usage}` (DDB-NAME-01), e.g. `user` or `user-access-log`."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)*$", var.usage))
    error_message = "DDB-NAME-01: usage \"${var.usage}\" must be lower case words joined by '-' (e.g. \"user-access-log\"); no underscores, capitals or spaces."
  }
}

################################################################################
# Keys and indexes (DDB-NAME-02/03, DDB-IDX-01..04)
################################################################################

variable "hash_key" {
  description = "Partition key attribute; a snake_case name that says what it holds, e.g. `user_id` (DDB-NAME-03)."
  type        = string

  validation {
    condition     = var.key_naming_reason != null || can(regex("^[a-z][a-z0-9]*(_[a-z0-9]+)*$", var.hash_key))
    error_message = "DDB-NAME-03: table ${local.name}: hash_key must be a snake_case attribute name that says what it holds (e.g. \"user_id\"), or set key_naming_reason (e.g. generic PK/SK keys of a migrated single-table design)."
  }
}

variable "key_naming_reason" {
  description = "Why the key attributes (hash_key, range_key) are not snake_case names that say what they hold (DDB-NAME-03), e.g. generic PK/SK keys kept from a single-table design; written as the dynops:exception:DDB-NAME-03 tag. null: keys must follow DDB-NAME-03."
  type        = string
  default     = null

  validation {
    condition     = var.key_naming_reason == null || (can(regex(local.reason_substance, coalesce(var.key_naming_reason, "x"))) && !can(regex(local.reason_placeholder, coalesce(var.key_naming_reason, "x"))))
    error_message = "DDB-NAME-03: table ${local.name}: key_naming_reason must say why (three letters or digits, no TODO/FIXME/TBD/XXX placeholder), or be left unset."
  }
}

variable "range_key" {
  description = "Sort key attribute (snake_case, DDB-NAME-03); null for a table without one."
  type        = string
  default     = null

  validation {
    condition     = var.range_key == null || var.key_naming_reason != null || can(regex("^[a-z][a-z0-9]*(_[a-z0-9]+)*$", coalesce(var.range_key, "x")))
    error_message = "DDB-NAME-03: table ${local.name}: range_key must be a snake_case attribute name (e.g. \"created_at\"), or set key_naming_reason."
  }
}

variable "attributes" {
  description = "Key attributes of the table and its indexes, each `{ name, type }` with type S, N or B (DDB-IDX-04). List every attribute used as a key, and no other."
  type = list(object({
    name = string
    type = string
  }))

  validation {
    condition     = alltrue([for a in var.attributes : contains(["S", "N", "B"], a.type)])
    error_message = "DDB-IDX-04: table ${local.name}: every attribute type must be S, N or B (key attributes cannot be other types)."
  }

  validation {
    condition     = alltrue([for a in var.attributes : can(regex("^[a-z][a-z0-9]*(_[a-z0-9]+)*$", a.name)) || var.key_naming_reason != null])
    error_message = "DDB-NAME-03: table ${local.name}: attribute names must be snake_case (e.g. \"tenant_id\", \"created_at\"): ${join(", ", [for a in var.attributes : a.name if !can(regex("^[a-z][a-z0-9]*(_[a-z0-9]+)*$", a.name))])}; or set key_naming_reason (generic key attributes of a single-table design such as PK, SK, GSI1PK, GSI1SK), which excepts the key attributes of the table and of its indexes (attributes holds only those: DynamoDB refuses an attribute definition no key uses)."
  }

  validation {
    condition     = length(distinct([for a in var.attributes : a.name])) == length(var.attributes)
    error_message = "DDB-IDX-04: table ${local.name}: an attribute is listed twice in attributes; list each key attribute once."
  }

  validation {
    condition     = contains([for a in var.attributes : a.name], var.hash_key) && (var.range_key == null || contains([for a in var.attributes : a.name], coalesce(var.range_key, var.hash_key)))
    error_message = "DDB-IDX-04: table ${local.name}: hash_key and range_key must be listed in attributes with their type (S, N or B)."
  }
}

variable "global_secondary_indexes" {
  description = <<-EOT
    GSIs (DDB-IDX-01: prefer GSIs over LSIs). Names are `gsi1`, `gsi2`, ... (DDB-NAME-02).
    projection_type defaults to INCLUDE with non_key_attributes (DDB-IDX-02); KEYS_ONLY is allowed;
    ALL needs allow_projection_all = true and projection_all_reason.
    With billing_mode = PROVISIONED: read_capacity / write_capacity are the index's capacity (auto scaling's minimum;
    default the table's) and read_max_capacity / write_max_capacity auto scaling's maximum (default autoscaling's).
    On-demand: max_read_request_units / max_write_request_units cap the index (cost guard, DDB-CAP-01).
  EOT
  type = list(object({
    name               = string
    hash_key           = string
    range_key          = optional(string)
    projection_type    = optional(string, "INCLUDE")
    non_key_attributes = optional(list(string), [])
    read_capacity      = optional(number)
    write_capacity     = optional(number)
    read_max_capacity  = optional(number)
    write_max_capacity = optional(number)

    max_read_request_units  = optional(number)
    max_write_request_units = optional(number)
  }))
  default  = []
  nullable = false

  validation {
    condition     = var.index_naming_reason != null || alltrue([for g in var.global_secondary_indexes : can(regex("^gsi[1-9][0-9]*$", g.name))])
    error_message = "DDB-NAME-02: table ${local.name}: GSI names must be generic sequence names gsi1, gsi2, ...: ${join(", ", [for g in var.global_secondary_indexes : g.name if !can(regex("^gsi[1-9][0-9]*$", g.name))])}; rename indexes named after their keys (e.g. \"user_id-index\" -> \"gsi1\"), or set index_naming_reason for the names of an adopted table (e.g. GSI1)."
  }

  validation {
    condition     = length(distinct([for g in var.global_secondary_indexes : g.name])) == length(var.global_secondary_indexes)
    error_message = "DDB-NAME-02: table ${local.name}: two GSIs share a name; number them gsi1, gsi2, ... once each."
  }

  validation {
    condition     = length(var.global_secondary_indexes) <= 20
    error_message = "DDB-IDX-04: table ${local.name}: a table has at most 20 GSIs; merge indexes or split the table."
  }

  validation {
    condition     = alltrue([for g in var.global_secondary_indexes : contains(["INCLUDE", "KEYS_ONLY", "ALL"], g.projection_type)])
    error_message = "DDB-IDX-02: table ${local.name}: GSI projection_type must be INCLUDE (default), KEYS_ONLY or ALL (ALL needs allow_projection_all)."
  }

  validation {
    condition     = alltrue([for g in var.global_secondary_indexes : g.projection_type != "INCLUDE" || length(g.non_key_attributes) > 0])
    error_message = "DDB-IDX-02: table ${local.name}: a GSI with projection_type INCLUDE must list non_key_attributes (the attributes its queries read); or set projection_type = \"KEYS_ONLY\"."
  }

  validation {
    condition     = alltrue([for g in var.global_secondary_indexes : contains([for a in var.attributes : a.name], g.hash_key) && (g.range_key == null || contains([for a in var.attributes : a.name], coalesce(g.range_key, g.hash_key)))])
    error_message = "DDB-IDX-04: table ${local.name}: every GSI hash_key and range_key must be listed in attributes with its type."
  }
}

variable "index_naming_reason" {
  description = "Why index names are not the sequence names gsi1, gsi2, ... / lsi1, ... (DDB-NAME-02 exception), e.g. GSI1 and GSI2 kept from an adopted single-table design (renaming an index means a new index); written as the dynops:exception:DDB-NAME-02 tag. null: names must follow DDB-NAME-02."
  type        = string
  default     = null

  validation {
    condition     = var.index_naming_reason == null || (can(regex(local.reason_substance, coalesce(var.index_naming_reason, "x"))) && !can(regex(local.reason_placeholder, coalesce(var.index_naming_reason, "x"))))
    error_message = "DDB-NAME-02: table ${local.name}: index_naming_reason must say why (three letters or digits, no TODO/FIXME/TBD/XXX placeholder), or be left unset."
  }
}

variable "allow_projection_all" {
  description = "Exception to DDB-IDX-02: allow GSIs with projection_type ALL. Needs projection_all_reason (the architect review that approved it)."
  type        = bool
  default     = false
  nullable    = false
}

variable "projection_all_reason" {
  description = "Why GSIs may project ALL (DDB-IDX-02 exception), e.g. the architect review reference. Required when allow_projection_all = true."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = !anytrue([for i in concat(var.global_secondary_indexes, var.local_secondary_indexes) : i.projection_type == "ALL"]) || (var.allow_projection_all && (can(regex(local.reason_substance, var.projection_all_reason)) && !can(regex(local.reason_placeholder, var.projection_all_reason))))
    error_message = "DDB-IDX-02: table ${local.name}: an index (${join(", ", [for i in concat(var.global_secondary_indexes, var.local_secondary_indexes) : i.name if i.projection_type == "ALL"])}) projects ALL; use INCLUDE with non_key_attributes, or set allow_projection_all = true with projection_all_reason naming the architect review. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

variable "local_secondary_indexes" {
  description = "LSIs, named `lsi1`, `lsi2`, ... Only when strong consistency, the same partition key and another sort order are all needed (DDB-IDX-01); they can be defined only at creation. At most 5 (DDB-IDX-04)."
  type = list(object({
    name               = string
    range_key          = string
    projection_type    = optional(string, "INCLUDE")
    non_key_attributes = optional(list(string), [])
  }))
  default  = []
  nullable = false

  validation {
    condition     = var.index_naming_reason != null || alltrue([for l in var.local_secondary_indexes : can(regex("^lsi[1-9][0-9]*$", l.name))])
    error_message = "DDB-NAME-02: table ${local.name}: LSI names must be generic sequence names lsi1, lsi2, ...: ${join(", ", [for l in var.local_secondary_indexes : l.name if !can(regex("^lsi[1-9][0-9]*$", l.name))])}; or set index_naming_reason for the names of an adopted table (e.g. LSI1)."
  }

  validation {
    condition     = length(var.local_secondary_indexes) <= 5
    error_message = "DDB-IDX-04: table ${local.name}: a table has at most 5 LSIs."
  }

  validation {
    condition     = alltrue([for l in var.local_secondary_indexes : contains(["INCLUDE", "KEYS_ONLY", "ALL"], l.projection_type)])
    error_message = "DDB-IDX-02: table ${local.name}: LSI projection_type must be INCLUDE (default), KEYS_ONLY or ALL (ALL needs allow_projection_all with projection_all_reason)."
  }

  validation {
    condition     = alltrue([for l in var.local_secondary_indexes : l.projection_type != "INCLUDE" || length(l.non_key_attributes) > 0])
    error_message = "DDB-IDX-02: table ${local.name}: an LSI with projection_type INCLUDE must list non_key_attributes; or set projection_type = \"KEYS_ONLY\"."
  }

  validation {
    condition     = length(var.local_secondary_indexes) == 0 || var.range_key != null
    error_message = "DDB-IDX-01: table ${local.name}: LSIs need a table with a range_key; use a GSI instead."
  }
}

################################################################################
# Capacity (DDB-CAP-01/02)
################################################################################

variable "billing_mode" {
  description = "PAY_PER_REQUEST (on-demand, the default, DDB-CAP-01) or PROVISIONED (needs provisioned_reason, read_capacity and write_capacity; auto scaling is created for the table and every GSI)."
  type        = string
  default     = "PAY_PER_REQUEST"
  nullable    = false

  validation {
    condition     = contains(["PAY_PER_REQUEST", "PROVISIONED"], var.billing_mode)
    error_message = "DDB-CAP-01: table ${local.name}: billing_mode must be PAY_PER_REQUEST (default) or PROVISIONED."
  }
}

variable "provisioned_reason" {
  description = "Why the table is PROVISIONED rather than on-demand (DDB-CAP-01 exception). Required with billing_mode = PROVISIONED."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.billing_mode != "PROVISIONED" || (can(regex(local.reason_substance, var.provisioned_reason)) && !can(regex(local.reason_placeholder, var.provisioned_reason)))
    error_message = "DDB-CAP-01: table ${local.name}: billing_mode PROVISIONED needs provisioned_reason (e.g. \"steady 2k WCU, 60% cheaper than on-demand\"); otherwise use PAY_PER_REQUEST. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

variable "read_capacity" {
  description = "Initial and minimum read capacity units with billing_mode = PROVISIONED (DDB-CAP-01)."
  type        = number
  default     = null

  validation {
    condition     = var.billing_mode != "PROVISIONED" || try(var.read_capacity >= 1, false)
    error_message = "DDB-CAP-01: table ${local.name}: billing_mode PROVISIONED needs read_capacity >= 1."
  }
}

variable "write_capacity" {
  description = "Initial and minimum write capacity units with billing_mode = PROVISIONED (DDB-CAP-01)."
  type        = number
  default     = null

  validation {
    condition     = var.billing_mode != "PROVISIONED" || try(var.write_capacity >= 1, false)
    error_message = "DDB-CAP-01: table ${local.name}: billing_mode PROVISIONED needs write_capacity >= 1."
  }
}

variable "autoscaling" {
  description = <<-EOT
    Auto scaling for PROVISIONED tables and every GSI (DDB-CAP-01). The minimum is read_capacity / write_capacity (per GSI:
    its own). The maximum is read_max_capacity / write_max_capacity (per GSI: its own), else the minimum times
    max_capacity_ratio. target_utilization is a percent; cooldowns are seconds (null: the AWS default).
    While auto scaling is on, plans keep the capacity auto scaling set (inside [min, max]): no reset on apply.
  EOT
  type = object({
    enabled            = optional(bool, true)
    max_capacity_ratio = optional(number, 10)
    target_utilization = optional(number, 70)
    read_max_capacity  = optional(number)
    write_max_capacity = optional(number)
    scale_in_cooldown  = optional(number)
    scale_out_cooldown = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition = (var.autoscaling.max_capacity_ratio >= 1 && var.autoscaling.target_utilization >= 20 && var.autoscaling.target_utilization <= 90
      && try(var.autoscaling.read_max_capacity >= var.read_capacity, var.autoscaling.read_max_capacity == null, true)
      && try(var.autoscaling.write_max_capacity >= var.write_capacity, var.autoscaling.write_max_capacity == null, true)
      && alltrue([for g in var.global_secondary_indexes : try(g.read_max_capacity >= coalesce(g.read_capacity, var.read_capacity), g.read_max_capacity == null, true)
    && try(g.write_max_capacity >= coalesce(g.write_capacity, var.write_capacity), g.write_max_capacity == null, true)]))
    error_message = "DDB-CAP-01: table ${local.name}: autoscaling.max_capacity_ratio must be >= 1, target_utilization between 20 and 90 (percent), and every *_max_capacity (table or GSI) at least its minimum (read_capacity / write_capacity)."
  }

  validation {
    condition     = var.billing_mode != "PROVISIONED" || var.autoscaling.enabled || (can(regex(local.reason_substance, var.autoscaling_disabled_reason)) && !can(regex(local.reason_placeholder, var.autoscaling_disabled_reason)))
    error_message = "DDB-CAP-01: table ${local.name}: a PROVISIONED table needs auto scaling on the table and every GSI; keep autoscaling.enabled = true, or give autoscaling_disabled_reason (e.g. the emulator cannot apply it). A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

variable "autoscaling_disabled_reason" {
  description = "Why auto scaling is off on a PROVISIONED table (DDB-CAP-01 exception), e.g. `local emulator cannot apply appautoscaling`."
  type        = string
  default     = ""
  nullable    = false
}

variable "table_class" {
  description = "STANDARD (default) or STANDARD_INFREQUENT_ACCESS for rarely read tables (DDB-CAP-02)."
  type        = string
  default     = "STANDARD"
  nullable    = false

  validation {
    condition     = contains(["STANDARD", "STANDARD_INFREQUENT_ACCESS"], var.table_class)
    error_message = "DDB-CAP-02: table ${local.name}: table_class must be STANDARD or STANDARD_INFREQUENT_ACCESS."
  }
}

################################################################################
# Protection and recovery (DDB-PROT-01, DDB-PITR-01)
################################################################################

variable "deletion_protection_enabled" {
  description = "Deletion protection (DDB-PROT-01, on in every environment). Turning it off needs deletion_protection_disabled_reason, e.g. for the apply that precedes a planned destroy."
  type        = bool
  default     = true
  nullable    = false
}

variable "deletion_protection_disabled_reason" {
  description = "Why deletion protection is off (DDB-PROT-01 exception). Required when deletion_protection_enabled = false."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.deletion_protection_enabled || (can(regex(local.reason_substance, var.deletion_protection_disabled_reason)) && !can(regex(local.reason_placeholder, var.deletion_protection_disabled_reason)))
    error_message = "DDB-PROT-01: table ${local.name}: deletion_protection_enabled = false needs deletion_protection_disabled_reason (e.g. \"decommission ticket OPS-123\"); otherwise keep it true. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

variable "point_in_time_recovery" {
  description = <<-EOT
    PITR (DDB-PITR-01): on with a 35-day recovery period by default (the maximum; the cost does not depend on the period).
    A shorter period or enabled = false needs point_in_time_recovery_reason (e.g. a compliance rule that user data be gone in 7 days, or a work table).
  EOT
  type = object({
    enabled                 = optional(bool, true)
    recovery_period_in_days = optional(number, 35)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.point_in_time_recovery.recovery_period_in_days >= 1 && var.point_in_time_recovery.recovery_period_in_days <= 35 && floor(var.point_in_time_recovery.recovery_period_in_days) == var.point_in_time_recovery.recovery_period_in_days
    error_message = "DDB-PITR-01: table ${local.name}: point_in_time_recovery.recovery_period_in_days must be a whole number from 1 to 35 (35 is the guideline default)."
  }
}

variable "point_in_time_recovery_reason" {
  description = "Why PITR is off or keeps fewer than 35 days (DDB-PITR-01 exception). Required then. (Before v2.0.0 it was point_in_time_recovery.reason.)"
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = (var.point_in_time_recovery.enabled && var.point_in_time_recovery.recovery_period_in_days == 35) || (can(regex(local.reason_substance, var.point_in_time_recovery_reason)) && !can(regex(local.reason_placeholder, var.point_in_time_recovery_reason)))
    error_message = "DDB-PITR-01: table ${local.name}: PITR off or a recovery period under 35 days needs point_in_time_recovery_reason (e.g. \"compliance: user data gone in 7 days\"; before v2.0.0 it was point_in_time_recovery.reason); otherwise keep enabled = true and 35 days. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

################################################################################
# Streams and TTL (DDB-STREAM-01, DDB-NAME-03)
################################################################################

variable "stream_enabled" {
  description = "DynamoDB Streams on the table (DDB-STREAM-02: streams first). On by default; global tables need it."
  type        = bool
  default     = true
  nullable    = false
}

variable "stream_view_type" {
  description = "Stream view type; NEW_AND_OLD_IMAGES (DDB-STREAM-01). Another view type needs stream_view_type_reason."
  type        = string
  default     = "NEW_AND_OLD_IMAGES"
  nullable    = false

  validation {
    condition     = contains(["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"], var.stream_view_type)
    error_message = "DDB-STREAM-01: table ${local.name}: stream_view_type must be NEW_AND_OLD_IMAGES (default), NEW_IMAGE, OLD_IMAGE or KEYS_ONLY."
  }
}

variable "stream_view_type_reason" {
  description = "Why the stream view type is not NEW_AND_OLD_IMAGES (DDB-STREAM-01 exception)."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.stream_view_type == "NEW_AND_OLD_IMAGES" || !var.stream_enabled || (can(regex(local.reason_substance, var.stream_view_type_reason)) && !can(regex(local.reason_placeholder, var.stream_view_type_reason)))
    error_message = "DDB-STREAM-01: table ${local.name}: a stream_view_type other than NEW_AND_OLD_IMAGES needs stream_view_type_reason; otherwise use NEW_AND_OLD_IMAGES. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder (dynops table adopt writes one for a person to replace); the exception tag keeps only letters, digits, spaces and _ . : / = + @ -."
  }
}

variable "ttl_enabled" {
  description = "TTL on ttl_attribute_name, on from the start (DDB-NAME-03)."
  type        = bool
  default     = true
  nullable    = false
}

variable "ttl_reason" {
  description = "Why TTL is off or not on the attribute `ttl` (DDB-NAME-03 exception), e.g. a legacy table adopted with its own TTL attribute."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = (var.ttl_enabled && var.ttl_attribute_name == "ttl") || (can(regex(local.reason_substance, var.ttl_reason)) && !can(regex(local.reason_placeholder, var.ttl_reason)))
    error_message = "DDB-NAME-03: table ${local.name}: TTL off or on an attribute other than \"ttl\" needs ttl_reason (three letters or digits, no TODO/FIXME/TBD/XXX placeholder); otherwise keep ttl_enabled = true on \"ttl\"."
  }
}

variable "ttl_attribute_name" {
  description = "TTL attribute (Number, epoch seconds). The guideline names it `ttl` (DDB-NAME-03); any other name (e.g. `expiresAt` of an adopted table, whose items already carry it) needs ttl_reason."
  type        = string
  default     = "ttl"
  nullable    = false

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]{1,255}$", var.ttl_attribute_name))
    error_message = "DDB-NAME-03: table ${local.name}: ttl_attribute_name must be an attribute name (letters, digits, _ . -); the guideline uses \"ttl\"."
  }
}

################################################################################
# Encryption (DDB-SEC-04)
################################################################################

variable "kms_key_arn" {
  description = "Customer managed KMS key ARN for encryption at rest (DDB-SEC-04, e.g. PCI DSS). null: the AWS owned key, the guideline default."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key|alias)/.+$", coalesce(var.kms_key_arn, "x")))
    error_message = "DDB-SEC-04: table ${local.name}: kms_key_arn must be a KMS key or alias ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null for the AWS owned key."
  }
}

variable "aws_managed_key_enabled" {
  description = "Encrypt with the AWS managed key `alias/aws/dynamodb` (DDB-SEC-04 allows it where a compliance rule asks for a key in the account's KMS); false: the AWS owned key, or kms_key_arn."
  type        = bool
  default     = false
  nullable    = false

  validation {
    condition     = !(var.aws_managed_key_enabled && var.kms_key_arn != null)
    error_message = "DDB-SEC-04: table ${local.name}: choose one key: aws_managed_key_enabled (alias/aws/dynamodb) or kms_key_arn (a customer managed key), not both."
  }
}

################################################################################
# Global tables (DDB-DR-01)
################################################################################

# Kept only to refuse old callers at plan with the way to move (its validation):
# tflint-ignore: terraform_unused_declarations
variable "replicas" {
  description = <<-EOT
    No longer taken: replicas are created with modules/dynamodb-table-replica (one call per region, with that region's
    provider), which gives each replica deletion protection (DDB-PROT-01) and PITR (DDB-PITR-01). Inline replica blocks
    cannot carry deletion protection (provider 5.100), so any value here is refused at plan with the way to move.
  EOT
  type = list(object({
    region      = string
    kms_key_arn = optional(string)
  }))
  default  = []
  nullable = false

  validation {
    condition     = length(var.replicas) == 0
    error_message = "DDB-PROT-01: table ${local.name}: inline replicas (${join(", ", [for r in var.replicas : r.region])}) cannot get deletion protection; create each replica with modules/dynamodb-table-replica (providers = { aws = aws.REGION }, global_table_arn = this module's table_arn) and remove replicas here. An existing replica moves without a rebuild: terraform import it into that module (docs/guideline.md#ddb-prot-01)."
  }
}

################################################################################
# Features the local emulator cannot apply
################################################################################

variable "contributor_insights_enabled" {
  description = "CloudWatch Contributor Insights on the table and its GSIs (hot keys at 3 a.m.). The local emulator cannot apply it: set false there."
  type        = bool
  default     = true
  nullable    = false
}

variable "resource_policy" {
  description = "Optional resource-based policy JSON for the table. A write fence of `dynops dr failover` / `migrate cutover` is added to the live policy by dynops, not here; a plan that would drop it is refused by Rego DDB-DR-02 (docs/dr.md)."
  type        = string
  default     = null
}

################################################################################
# Tags
################################################################################

variable "tags" {
  description = "Extra tags, merged under the standard tags env, product, usage, managed-by (the standard keys cannot be overridden). `dynops:*` keys are refused: exceptions come from the *_reason inputs only."
  type        = map(string)
  default     = {}
  nullable    = false

  # DDB-SEC-02 index keys: dynamodb:LeadingKeys bounds only the partition key
  # a request names. On a multi-tenant table (tag dynops:tenant-key = the
  # tenant key attribute, the table's hash key) a GSI keyed by another
  # attribute lets a tenant write an item that shows up in another tenant's
  # index queries; such a GSI needs the tag dynops:cross-tenant:<gsi> = reason.
  validation {
    condition = lookup(var.tags, "dynops:tenant-key", "") == "" || (
      lookup(var.tags, "dynops:tenant-key", "") == var.hash_key &&
      alltrue([for g in var.global_secondary_indexes : g.hash_key == lookup(var.tags, "dynops:tenant-key", "") || length(trimspace(lookup(var.tags, "dynops:cross-tenant:${g.name}", ""))) > 0])
    )
    error_message = "DDB-SEC-02: table ${local.name}: on a multi-tenant table (tag dynops:tenant-key) the tenant key must be the table's hash_key and every GSI's hash_key, so that dynamodb:LeadingKeys bounds the index too; key a tenant-scoped GSI by the tenant key (put the rest in its range key), or tag a GSI that is not tenant-scoped \"dynops:cross-tenant:<gsi>\" = \"<reason>\" (and deny it to the tenant role: modules/dynamodb-access cross_tenant_indexes)."
  }

  # dynops:* tags are the module's (exceptions, key schema), except the
  # DDB-SEC-02 tenant tags a team sets: dynops:tenant-key and
  # dynops:cross-tenant:<gsi>. Any other is refused as forged.
  validation {
    condition     = length([for k in keys(var.tags) : k if startswith(lower(k), "dynops:") && k != "dynops:tenant-key" && !startswith(k, "dynops:cross-tenant:")]) == 0
    error_message = "DDB-EXC-01: table ${local.name}: tags must not set ${join(", ", [for k in keys(var.tags) : k if startswith(lower(k), "dynops:") && k != "dynops:tenant-key" && !startswith(k, "dynops:cross-tenant:")])}: exception tags are written by the module from the matching *_reason input (e.g. point_in_time_recovery_reason), so they are reviewed in the plan; remove the tag and give the reason input instead. Only dynops:tenant-key and dynops:cross-tenant:<gsi> (DDB-SEC-02) are set through tags."
  }
}

################################################################################
# Name override (DDB-NAME-01 exception, adopted legacy tables)
################################################################################

variable "name_override" {
  description = "A table name that does not follow `{env}-{product}-{usage}`, for an existing table adopted as it is (`dynops table adopt`). Needs name_override_reason (DDB-NAME-01 exception). env, product and usage still tag the table."
  type        = string
  default     = null

  validation {
    condition     = var.name_override == null || can(regex("^[a-zA-Z0-9_.-]{3,255}$", coalesce(var.name_override, "x")))
    error_message = "DDB-NAME-01: name_override \"${var.name_override == null ? "" : var.name_override}\" must be a DynamoDB table name (3 to 255 of a-z A-Z 0-9 _ . -)."
  }
}

variable "name_override_reason" {
  description = "Why the table keeps a name outside `{env}-{product}-{usage}` (DDB-NAME-01 exception), e.g. `legacy table, renaming needs a migration: OPS-77`."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.name_override == null || (can(regex(local.reason_substance, var.name_override_reason)) && !can(regex(local.reason_placeholder, var.name_override_reason)))
    error_message = "DDB-NAME-01: table ${var.name_override == null ? "" : var.name_override}: name_override needs name_override_reason (e.g. \"legacy table, renaming needs a migration\"); otherwise leave name_override null and use {env}-{product}-{usage}. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder."
  }
}

################################################################################
# Cost guard and timeouts (parity with terraform-aws-modules/dynamodb-table)
################################################################################

variable "on_demand_throughput" {
  description = "On-demand only: the most read / write request units per second the table may use (the cost guard of PAY_PER_REQUEST, DDB-CAP-01). null: no cap. GSIs take max_read_request_units / max_write_request_units."
  type = object({
    max_read_request_units  = optional(number)
    max_write_request_units = optional(number)
  })
  default = null

  validation {
    condition     = var.on_demand_throughput == null || var.billing_mode == "PAY_PER_REQUEST"
    error_message = "DDB-CAP-01: table ${local.name}: on_demand_throughput caps an on-demand table; with billing_mode PROVISIONED set the capacity and auto scaling's maximum instead."
  }
}

variable "on_demand_throughput_reason" {
  description = "Why an on-demand table in a protected env (protected_envs) has no on_demand_throughput maximum for reads and writes (DDB-CAP-04 exception), e.g. `launch week, traffic unknown: OPS-12`."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition = (var.billing_mode != "PAY_PER_REQUEST" || !contains(var.protected_envs, var.env) || local.cost_ceiling ||
    (can(regex(local.reason_substance, var.on_demand_throughput_reason)) && !can(regex(local.reason_placeholder, var.on_demand_throughput_reason))))
    error_message = "DDB-CAP-04: table ${local.name} is on-demand in protected env ${var.env}: set on_demand_throughput = { max_read_request_units = N, max_write_request_units = N } (its cost ceiling, N > 0), or say why not in on_demand_throughput_reason. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder."
  }
}

variable "protected_envs" {
  description = "Envs whose on-demand tables need a cost ceiling (DDB-CAP-04): dynops's built-in protected envs (internal/protect) by default; add the ones your dynops settings protect."
  type        = list(string)
  default     = ["prod", "production", "prd", "live", "prod1", "prod2", "prd1", "prd2"]
  nullable    = false
}

variable "timeouts" {
  description = "Timeouts of table create / update / delete (e.g. `{ update = \"2h\" }` for a large GSI backfill); null: the provider's."
  type = object({
    create = optional(string)
    update = optional(string)
    delete = optional(string)
  })
  default = null
}
