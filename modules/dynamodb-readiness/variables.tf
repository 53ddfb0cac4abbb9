variable "env" {
  description = "Environment (DDB-NAME-01) whose tables (`<env>-*`) the readiness run checks."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-NAME-01: env must be lower case letters and digits (e.g. \"dev\")."
  }
}

variable "restore_table_arn" {
  description = "ARN of the env table whose latest restorable point in time the restore test restores to a throwaway `<env>-dynops-restoretest-<unix>` table (PITR must be on). Its partition, region and account place every other ARN."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/${var.env}-[a-z0-9-]+$", var.restore_table_arn))
    error_message = "DDB-PITR-01: restore_table_arn must be a table of the env, arn:aws:dynamodb:REGION:ACCOUNT:table/<env>-<product>-<usage>."
  }
}

variable "readiness_zip_path" {
  description = "Path of the readiness Lambda zip built by `make readiness-zip` (bin/readiness.zip)."
  type        = string

  validation {
    condition     = endswith(var.readiness_zip_path, ".zip")
    error_message = "DDB-PITR-01: readiness_zip_path must be the zip `make readiness-zip` builds (bin/readiness.zip)."
  }
}

variable "schedule_expression" {
  description = "How often the readiness run (check, restore test, metrics) runs (EventBridge Scheduler expression)."
  type        = string
  default     = "rate(1 day)"

  validation {
    condition     = can(regex("^(rate\\(.+\\)|cron\\(.+\\))$", var.schedule_expression))
    error_message = "DDB-PITR-01: schedule_expression must be rate(...) or cron(...), e.g. \"rate(1 day)\"."
  }
}

variable "restore_time_alarm_seconds" {
  description = "Alarm when a restore test takes longer than this (request to ACTIVE and verified): the evidence for the Config rule dynamodb-meets-restore-time-target."
  type        = number
  default     = 3600

  validation {
    condition     = var.restore_time_alarm_seconds >= 60 && var.restore_time_alarm_seconds <= 86400
    error_message = "DDB-PITR-01: restore_time_alarm_seconds must be between 60 and 86400."
  }
}

variable "rule_ids" {
  description = "Guideline rule IDs (docs/guideline.md) that get a FailingRule alarm. Default: every rule of docs/guideline.md (the run publishes a FailingRule metric for each)."
  type        = list(string)
  default = [
    "DDB-NAME-01", "DDB-NAME-02", "DDB-NAME-03",
    "DDB-CAP-01", "DDB-CAP-02", "DDB-CAP-03", "DDB-IDX-01", "DDB-IDX-02", "DDB-IDX-03", "DDB-IDX-04",
    "DDB-STREAM-01", "DDB-STREAM-02", "DDB-STREAM-03", "DDB-STREAM-04", "DDB-STREAM-05",
    "DDB-PROT-01", "DDB-PITR-01", "DDB-PITR-02", "DDB-DR-01", "DDB-EXP-01", "DDB-EXP-02", "DDB-MON-01",
    "DDB-SEC-01", "DDB-SEC-02", "DDB-SEC-03", "DDB-SEC-04", "DDB-SEC-05", "DDB-SEC-06", "DDB-API-01", "DDB-API-02", "DDB-API-03", "DDB-API-04", "DDB-API-05", "DDB-EXC-01"
  ]

  validation {
    condition     = length(var.rule_ids) > 0 && alltrue([for r in var.rule_ids : can(regex("^DDB-[A-Z]+-[0-9]{2}$", r))])
    error_message = "DDB-MON-01: rule_ids must list guideline rule IDs like \"DDB-PITR-01\" (docs/guideline.md)."
  }
}

variable "alarm_actions" {
  description = "SNS topic ARNs notified when a readiness alarm fires and recovers (the env's alarm topic, modules/alarm-topic)."
  type        = list(string)

  validation {
    condition     = length(var.alarm_actions) > 0 && alltrue([for a in var.alarm_actions : can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:.+$", a))])
    error_message = "DDB-MON-01: alarm_actions must list at least one SNS topic ARN: readiness alarms must notify someone."
  }
}

variable "log_retention_days" {
  description = "Retention of the readiness Lambda's logs."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "DDB-MON-01: log_retention_days must be a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, ... 3653)."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key ARN encrypting the readiness Lambda's log group; null uses CloudWatch Logs' own encryption."
  type        = string
  default     = null

  validation {
    condition     = var.log_kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/.+$", coalesce(var.log_kms_key_arn, "x")))
    error_message = "DDB-SEC-04: log_kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null."
  }
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary attached to the module's roles, or null."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", coalesce(var.permissions_boundary_arn, "x")))
    error_message = "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null."
  }
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
