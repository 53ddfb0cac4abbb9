variable "global_table_arn" {
  description = "ARN of the table this replicates (modules/dynamodb-table's table_arn)."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[a-zA-Z0-9_.-]{3,255}$", var.global_table_arn))
    error_message = "DDB-DR-01: global_table_arn \"${var.global_table_arn}\" must be a table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME); pass module.TABLE.table_arn."
  }
}

variable "table_name" {
  description = <<-EOT
    Name of the table this replicates (modules/dynamodb-table's table_name output); it must match global_table_arn.
    Required: every refusal names the table with it at plan time, while the ARN of a table created in the same plan
    is known only after apply (a refusal that read the name from the ARN could not be printed).
  EOT
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.table_name))
    error_message = "DDB-DR-01: table_name \"${var.table_name}\" is not a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -); pass module.TABLE.table_name."
  }

  validation {
    condition     = endswith(var.global_table_arn, ":table/${var.table_name}")
    error_message = "DDB-DR-01: table ${var.table_name}: table_name and global_table_arn (${var.global_table_arn}) name different tables; pass module.TABLE.table_name and module.TABLE.table_arn of the same table."
  }
}

variable "point_in_time_recovery" {
  description = <<-EOT
    The table's PITR setting (modules/dynamodb-table's point_in_time_recovery output), applied to the replica (DDB-PITR-01).
    Provider 5.100 cannot set a replica's recovery period (a replica gets 35 days), so a table with a shorter period
    is refused: the replica would keep data longer than the table's reason allows.
  EOT
  type = object({
    enabled                 = optional(bool, true)
    recovery_period_in_days = optional(number, 35)
  })
  default = {}

  validation {
    condition     = !var.point_in_time_recovery.enabled || var.point_in_time_recovery.recovery_period_in_days == 35
    error_message = "DDB-PITR-01: table ${var.table_name}: its PITR period is ${var.point_in_time_recovery.recovery_period_in_days} days, but a replica cannot be given a period (provider 5.100; AWS uses 35 days), so the replica would keep recovery data longer than the table's DDB-PITR-01 exception allows. Keep the table at 35 days, or keep it regional (no replica) and copy backups instead (modules/dr backup, docs/guideline.md#ddb-pitr-01)."
  }
}

variable "table_stream_view_type" {
  description = "The table's stream view type (modules/dynamodb-table's stream_view_type output; null when its stream is off). Global tables replicate through the table's stream, which must carry NEW_AND_OLD_IMAGES (DDB-DR-01)."
  type        = string

  validation {
    condition     = var.table_stream_view_type == "NEW_AND_OLD_IMAGES"
    error_message = "DDB-DR-01: table ${var.table_name}: a replica needs the table's stream on with NEW_AND_OLD_IMAGES (global tables replicate through it, and the guideline keeps it on, DDB-STREAM-01), but the table's stream view type is ${coalesce(var.table_stream_view_type, "none (stream off)")}. Set stream_enabled = true and stream_view_type = \"NEW_AND_OLD_IMAGES\" on the table (modules/dynamodb-table), and pass its stream_view_type output here."
  }
}

variable "table_tags" {
  description = "The table's tags (modules/dynamodb-table's tags output): the replica carries the same standard and exception tags."
  type        = map(string)
  default     = {}
}

variable "deletion_protection_enabled" {
  description = "Deletion protection on the replica (DDB-PROT-01, on). Off only with deletion_protection_disabled_reason, for the documented two-step delete."
  type        = bool
  default     = true
}

variable "deletion_protection_disabled_reason" {
  description = "Why the replica's deletion protection is off (DDB-PROT-01 exception), e.g. `decommission OPS-123`."
  type        = string
  default     = ""

  validation {
    condition     = var.deletion_protection_enabled || (can(regex(local.reason_substance, var.deletion_protection_disabled_reason)) && !can(regex(local.reason_placeholder, var.deletion_protection_disabled_reason)))
    error_message = "DDB-PROT-01: replica of ${var.table_name}: deletion_protection_enabled = false needs deletion_protection_disabled_reason (e.g. \"decommission ticket OPS-123\"); otherwise keep it true. A reason needs three letters or digits and no TODO/FIXME/TBD/XXX placeholder."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key in the replica's region (DDB-SEC-04); null: the table's kind of key."
  type        = string
  default     = null
}

variable "table_class_override" {
  description = "Table class of the replica (DDB-CAP-02); null: the table's."
  type        = string
  default     = null

  validation {
    condition     = var.table_class_override == null || contains(["STANDARD", "STANDARD_INFREQUENT_ACCESS"], coalesce(var.table_class_override, "STANDARD"))
    error_message = "DDB-CAP-02: table_class_override must be STANDARD or STANDARD_INFREQUENT_ACCESS (or null for the table's class)."
  }
}

variable "timeouts" {
  description = "Timeouts of replica create / update / delete; null: the provider's."
  type = object({
    create = optional(string)
    update = optional(string)
    delete = optional(string)
  })
  default = null
}
