################################################################################
# Naming
################################################################################

variable "env" {
  description = "Environment (DDB-NAME-01): the first word of the bucket and checkpoint table names."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-NAME-01: env must be lower case letters and digits (e.g. \"dev\")."
  }
}

variable "product" {
  description = "Product that owns the tables (DDB-NAME-01)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)*$", var.product))
    error_message = "DDB-NAME-01: product must be lower case words joined by '-' (e.g. \"hoge\")."
  }
}

variable "bucket_name" {
  description = "Name of the export bucket; null for `{env}-{product}-dynamodb-exports`. Bucket names are global: set it when that name is taken."
  type        = string
  default     = null

  validation {
    condition     = var.bucket_name == null || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", coalesce(var.bucket_name, "ok")))
    error_message = "DDB-EXP-01: bucket_name must be 3-63 lower case letters, digits, '.' or '-' (an S3 bucket name)."
  }
}

################################################################################
# What may be exported (DDB-EXP-01)
################################################################################

variable "tables" {
  description = "Tables whose exports the bucket accepts (name and ARN, e.g. from modules/dynamodb-table), each under `{exports_prefix}/{name}/`. The bucket policy denies object writes anywhere else. All in one account and region."
  type = list(object({
    name = string
    arn  = string
  }))

  validation {
    condition = length(var.tables) > 0 && alltrue([for t in var.tables :
    can(regex("^[a-z][a-z0-9]*-[a-z0-9]+(-[a-z0-9]+)*$", t.name)) && can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/${t.name}$", t.arn))])
    error_message = "DDB-NAME-01: tables must list at least one table, each { name = \"{env}-{product}-{usage}\", arn = \"arn:aws:dynamodb:REGION:ACCOUNT:table/<name>\" }."
  }

  validation {
    condition     = length(distinct([for t in var.tables : join(":", slice(split(":", t.arn), 0, 5))])) <= 1
    error_message = "DDB-EXP-01: tables must all be in one account and region (one export module per region)."
  }
}

variable "exports_prefix" {
  description = "Key prefix of every export; each table's exports go under `{exports_prefix}/{table}/`."
  type        = string
  default     = "exports"

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9_.-]+)*$", var.exports_prefix))
    error_message = "DDB-EXP-01: exports_prefix must be a key prefix without leading or trailing '/' (e.g. \"exports\")."
  }
}

variable "exporter_principal_arns" {
  description = "IAM principals (e.g. the on-call role running `dynops export`) allowed by the bucket policy to write exports of the named tables. The scheduler's role is added when the schedule is on."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.exporter_principal_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:", a))])
    error_message = "DDB-SEC-01: exporter_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME), not wildcards."
  }
}

################################################################################
# Bucket hardening
################################################################################

variable "kms_key_arn" {
  description = "Customer managed KMS key for SSE-KMS (DDB-SEC-04 when compliance requires a CMK); null for SSE-S3 (AES256)."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:", coalesce(var.kms_key_arn, "x")))
    error_message = "DDB-SEC-04: kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null for SSE-S3."
  }
}

variable "lifecycle_rules" {
  description = <<-EOT
    Lifecycle of the exports: `abort_incomplete_multipart_upload_days` (failed export uploads),
    `noncurrent_version_expiration_days` (overwritten or deleted objects, the bucket is versioned),
    `transition_to_standard_ia_days` and `expiration_days` (current objects; null: never).
  EOT
  type = object({
    abort_incomplete_multipart_upload_days = optional(number, 7)
    noncurrent_version_expiration_days     = optional(number, 30)
    transition_to_standard_ia_days         = optional(number)
    expiration_days                        = optional(number)
  })
  default = {}

  validation {
    condition = (var.lifecycle_rules.abort_incomplete_multipart_upload_days >= 1 && var.lifecycle_rules.noncurrent_version_expiration_days >= 1
      && (var.lifecycle_rules.transition_to_standard_ia_days == null || coalesce(var.lifecycle_rules.transition_to_standard_ia_days, 30) >= 30)
    && (var.lifecycle_rules.expiration_days == null || coalesce(var.lifecycle_rules.expiration_days, 1) >= 1))
    error_message = "DDB-EXP-01: lifecycle_rules: day counts must be at least 1, and transition_to_standard_ia_days at least 30 (an S3 rule for STANDARD_IA)."
  }
}

variable "tls_only_disabled_reason" {
  description = "Why the bucket may be reached without TLS; empty (the default) keeps the TLS-only deny. Only for the local emulator, which speaks plain HTTP (and enforces the deny). Shows as the bucket tag dynops:exception:tls-only."
  type        = string
  default     = ""
}

variable "object_lock" {
  description = <<-EOT
    S3 Object Lock on the exports (issue 44): each object version written is kept `days` days from its
    write, so that nobody who can write under an export prefix (an exporter, the scheduler, the
    operator) can overwrite or delete an export dynops may later read. `mode` GOVERNANCE (default: a
    principal with s3:BypassGovernanceRetention can still remove a version) or COMPLIANCE (nobody can,
    not even the account root, until the days pass). null: off. Turning it on enables Object Lock on the
    existing (versioned) bucket, in place; it cannot be turned off again on that bucket.
  EOT
  type = object({
    days = number
    mode = optional(string, "GOVERNANCE")
  })
  default = null

  validation {
    condition     = var.object_lock == null || try(var.object_lock.days >= 1 && var.object_lock.days <= 36500 && floor(var.object_lock.days) == var.object_lock.days, false)
    error_message = "DDB-EXP-01: object_lock.days must be a whole number of days from 1 to 36500 (S3 Object Lock's default retention)."
  }

  validation {
    condition     = var.object_lock == null || contains(["GOVERNANCE", "COMPLIANCE"], try(var.object_lock.mode, ""))
    error_message = "DDB-EXP-01: object_lock.mode must be GOVERNANCE (removable with s3:BypassGovernanceRetention) or COMPLIANCE (removable by nobody until the days pass)."
  }
}

variable "force_destroy" {
  description = "Let `terraform destroy` delete a bucket that still holds exports. Only for throw-away environments (the local emulator, tests)."
  type        = bool
  default     = false
}

################################################################################
# Scheduled gap-free incremental exports
################################################################################

variable "schedule_enabled" {
  description = "Export every table on a schedule: one full export, then contiguous incremental windows (15 min..24 h) from a checkpoint, by the Go Lambda cmd/export-scheduler."
  type        = bool
  default     = false
}

variable "scheduler_zip_path" {
  description = "Path of the scheduler Lambda zip built by `make export-scheduler-zip` (bin/export-scheduler.zip). Required when schedule_enabled."
  type        = string
  default     = null

  validation {
    condition     = !var.schedule_enabled || var.scheduler_zip_path != null
    error_message = "DDB-EXP-01: schedule_enabled needs scheduler_zip_path: run `make export-scheduler-zip` and pass bin/export-scheduler.zip."
  }
}

variable "schedule_expression" {
  description = "How often each table's series takes a step (EventBridge Scheduler expression). Each step accounts for the export in flight and starts the next window."
  type        = string
  default     = "rate(15 minutes)"

  validation {
    condition     = can(regex("^(rate\\(.+\\)|cron\\(.+\\))$", var.schedule_expression))
    error_message = "DDB-EXP-01: schedule_expression must be rate(...) or cron(...), e.g. \"rate(15 minutes)\"."
  }
}

variable "lag_alarm_seconds" {
  description = "Alarm when a table's checkpoint is further behind than this (the series fell behind, or stopped: missing data alarms too)."
  type        = number
  default     = 10800

  validation {
    condition     = var.lag_alarm_seconds >= 1800
    error_message = "DDB-EXP-01: lag_alarm_seconds must be at least 1800: a healthy series runs up to a 15-minute window plus the export's own run time behind."
  }
}

variable "alarm_actions" {
  description = "SNS topic ARNs notified when an export alarm fires (and recovers); the checkpoint table's alarms use the first. Required with schedule_enabled (e.g. modules/alarm-topic's encrypted topic, or the stack's)."
  type        = list(string)
  default     = []

  validation {
    condition     = !var.schedule_enabled || length(var.alarm_actions) > 0
    error_message = "DDB-MON-01: a scheduled export needs alarm_actions (SNS topic ARNs): its behind, failed, gap and scheduler alarms and the checkpoint table's alarms must notify someone. Pass the env's alarm topic (modules/alarm-topic, encrypted with a customer managed key, DDB-SEC-04)."
  }
}

variable "contributor_insights_enabled" {
  description = "Contributor Insights on the checkpoint table. The local emulator cannot apply it: set false there."
  type        = bool
  default     = true
}

variable "log_retention_days" {
  description = "Retention of the scheduler Lambda's logs."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}

variable "permissions_boundary_arn" {
  description = "Optional permissions boundary policy ARN set on every role this module creates (modules/ci-test-role's output for the suite against AWS)."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", coalesce(var.permissions_boundary_arn, "x")))
    error_message = "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null."
  }
}
