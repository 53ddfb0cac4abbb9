variable "account_id" {
  description = "AWS account ID of the environment, for the failover role's ARNs (an input, so plans need no STS call)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-03: account_id must be the 12-digit AWS account ID of the environment."
  }
}

variable "env" {
  description = "Environment (DDB-NAME-01); every table name must start with `{env}-` (DDB-SEC-03 scopes the failover role by it)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-NAME-01: env must be lower case letters and digits (e.g. \"prod\")."
  }
}

variable "tables" {
  description = "Global tables (DDB-DR-01 pattern 4) that get an active-region pointer in both regions and that the failover role may fence, e.g. modules/dynamodb-stack output `global_table_names`."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.tables : can(regex("^[a-z][a-z0-9]*-[a-z0-9-]+$", t))])
    error_message = "DDB-NAME-01: tables must be table names {env}-{product}-{usage}, e.g. \"prod-hoge-session\"."
  }

  validation {
    condition     = alltrue([for t in var.tables : startswith(t, "${var.env}-")])
    error_message = "DDB-SEC-03: every table must be one of this env's (name starting with \"<env>-\"); the failover role of one env never reaches another env's tables."
  }
}

variable "pointer_prefix" {
  description = "SSM path under which each table's pointer lives: `{prefix}/{table}/active-region`. `dynops dr` reads `/dynops/dr` unless given --pointer."
  type        = string
  default     = "/dynops/dr"

  validation {
    condition     = can(regex("^(/[A-Za-z0-9_.-]+)+$", var.pointer_prefix))
    error_message = "DDB-DR-01: pointer_prefix must be an SSM path such as \"/dynops/dr\" (leading slash, no trailing slash)."
  }
}

variable "failover_role" {
  description = <<-EOF
    The IAM role on-call engineers assume to run `dynops dr` (DDB-SEC-01: only what it needs).
    trusted_principal_arns: who may assume it (required when enabled).
    require_mfa (default true): the role changes resource policies (the fence), which can switch protection off, so it is
    assumed with MFA only and denies PutResourcePolicy/DeleteResourcePolicy in a session without MFA (DDB-SEC-01 break-glass).
    require_mfa = false needs failover_role_no_mfa_reason.
  EOF
  type = object({
    enabled                = optional(bool, true)
    name                   = optional(string)
    trusted_principal_arns = optional(list(string), [])
    require_mfa            = optional(bool, true)
  })
  default = {}

  validation {
    condition     = !var.failover_role.enabled || length(var.failover_role.trusted_principal_arns) > 0
    error_message = "DDB-SEC-01: failover_role.trusted_principal_arns must name who may assume the failover role (e.g. the on-call SSO role ARN), or set failover_role.enabled = false."
  }

  validation {
    condition     = alltrue([for a in var.failover_role.trusted_principal_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:", a))])
    error_message = "DDB-SEC-01: failover_role.trusted_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME)."
  }
}

variable "failover_role_no_mfa_reason" {
  description = "Why the failover role may lift the fence without MFA (DDB-SEC-01 exception). Required when failover_role.require_mfa = false. (Before v2.0.0 it was failover_role.no_mfa_reason.)"
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = try(var.failover_role.require_mfa, true) != false || length(regexall("[\\p{L}\\p{N}]", var.failover_role_no_mfa_reason)) >= 3
    error_message = "DDB-SEC-01: failover_role.require_mfa = false lets a session without MFA lift the DR fence (break-glass): set failover_role_no_mfa_reason to say why (three letters or digits at least; before v2.0.0 it was failover_role.no_mfa_reason), or keep require_mfa = true."
  }
}

variable "route53" {
  description = <<-EOF
    Optional Route 53 failover records: one name answering with the primary region's endpoint while its
    health check passes, the secondary's otherwise. `dynops dr failover` inverts health checks to force it
    (pass the output health_check_ids as --health-check REGION=ID). null: no records.
  EOF
  type = object({
    zone_id            = string
    record_name        = string
    primary_endpoint   = string
    secondary_endpoint = string
    port               = optional(number, 443)
    path               = optional(string, "/health")
    ttl                = optional(number, 60)
  })
  default = null

  validation {
    condition     = var.route53 == null || try(var.route53.port > 0 && var.route53.port < 65536 && startswith(var.route53.path, "/"), false)
    error_message = "DDB-DR-01: route53.port must be a TCP port and route53.path an HTTP path starting with \"/\"."
  }
}

variable "fis_pause_replication" {
  description = <<-EOT
    An AWS FIS experiment template that pauses replication into the secondary region's replicas of `tables`
    (action aws:dynamodb:global-table-pause-replication), for `dynops dr drill --pause-replication` (DDB-DR-01).
    duration: ISO 8601, 1 minute to 12 hours (e.g. "PT10M"); stop_alarm_arns: CloudWatch alarms that stop the
    experiment early (none: it runs its duration unless stopped). The experiment's role may change those
    replicas' resource policies and nothing else.
  EOT
  type = object({
    enabled         = optional(bool, false)
    duration        = optional(string, "PT10M")
    stop_alarm_arns = optional(list(string), [])
  })
  default  = {}
  nullable = false

  validation {
    condition = can(regex("^PT([0-9]+H)?([0-9]+M)?([0-9]+S)?$", var.fis_pause_replication.duration)) && (
      try(tonumber(regex("([0-9]+)H", var.fis_pause_replication.duration)[0]), 0) * 3600 +
      try(tonumber(regex("([0-9]+)M", var.fis_pause_replication.duration)[0]), 0) * 60 +
      try(tonumber(regex("([0-9]+)S", var.fis_pause_replication.duration)[0]), 0)
      ) >= 60 && (
      try(tonumber(regex("([0-9]+)H", var.fis_pause_replication.duration)[0]), 0) * 3600 +
      try(tonumber(regex("([0-9]+)M", var.fis_pause_replication.duration)[0]), 0) * 60 +
      try(tonumber(regex("([0-9]+)S", var.fis_pause_replication.duration)[0]), 0)
    ) <= 43200
    error_message = "DDB-DR-01: fis_pause_replication.duration must be an ISO 8601 duration such as \"PT10M\" or \"PT1H30M\" (1 minute to 12 hours)."
  }
  validation {
    condition     = alltrue([for a in var.fis_pause_replication.stop_alarm_arns : can(regex("^arn:[^:]+:cloudwatch:[^:]+:[0-9]{12}:alarm:.+$", a))])
    error_message = "DDB-DR-01: fis_pause_replication.stop_alarm_arns must be CloudWatch alarm ARNs (arn:aws:cloudwatch:REGION:ACCOUNT:alarm:NAME)."
  }
}

variable "backup" {
  description = <<-EOF
    AWS Backup for every table (Security Hub DynamoDB.4 in both regions): `tables` (not global, DDB-DR-01
    pattern 1) and `global_tables` in the primary region by one plan, the global tables' replicas in the
    secondary region by a plan there. copy_to_other_region copies each recovery point to the other region's
    vault. vault_lock (optional) locks both vaults: min/max retention in days, and changeable_for_days
    (at least 3; after it the lock cannot be removed: compliance mode; null: governance mode).
    selection_enabled = false leaves out the aws_backup_selection (the local emulator answers it with 500).
  EOF
  type = object({
    enabled              = optional(bool, false)
    tables               = optional(list(string), [])
    global_tables        = optional(list(string), [])
    schedule             = optional(string, "cron(0 3 * * ? *)")
    retention_days       = optional(number, 35)
    copy_retention_days  = optional(number, 35)
    copy_to_other_region = optional(bool, true)
    selection_enabled    = optional(bool, true)
    vault_lock = optional(object({
      min_retention_days  = number
      max_retention_days  = optional(number)
      changeable_for_days = optional(number)
    }))
  })
  default = {}

  validation {
    condition     = alltrue([for t in var.backup.global_tables : startswith(t, "${var.env}-")]) && length(setintersection(var.backup.tables, var.backup.global_tables)) == 0
    error_message = "DDB-SEC-03: every backup.global_tables entry must be one of this env's tables (name starting with \"<env>-\"), and not also in backup.tables."
  }

  validation {
    condition = var.backup.vault_lock == null || try(
      var.backup.vault_lock.min_retention_days >= 1 &&
      var.backup.vault_lock.min_retention_days <= var.backup.retention_days &&
      var.backup.vault_lock.min_retention_days <= var.backup.copy_retention_days &&
      (var.backup.vault_lock.max_retention_days == null || (var.backup.vault_lock.max_retention_days >= var.backup.retention_days && var.backup.vault_lock.max_retention_days >= var.backup.copy_retention_days)) &&
    (var.backup.vault_lock.changeable_for_days == null || var.backup.vault_lock.changeable_for_days >= 3), false)
    error_message = "DDB-DR-01: backup.vault_lock: min_retention_days must be at least 1 and at most retention_days and copy_retention_days, max_retention_days (when set) at least both, changeable_for_days (when set) at least 3 (AWS Backup's minimum): a lock the plan's own recovery points break refuses every backup."
  }

  validation {
    condition     = alltrue([for t in var.backup.tables : startswith(t, "${var.env}-")])
    error_message = "DDB-SEC-03: every backup.tables entry must be one of this env's tables (name starting with \"<env>-\")."
  }

  validation {
    condition     = !var.backup.enabled || length(var.backup.tables) + length(var.backup.global_tables) > 0
    error_message = "DDB-DR-01: backup.enabled needs backup.tables or backup.global_tables (modules/dynamodb-stack outputs regional_table_names and global_table_names)."
  }

  validation {
    condition     = var.backup.retention_days >= 1 && var.backup.copy_retention_days >= 1
    error_message = "DDB-DR-01: backup.retention_days and backup.copy_retention_days must be at least 1."
  }

  validation {
    condition     = can(regex("^(cron|rate)\\(.+\\)$", var.backup.schedule))
    error_message = "DDB-DR-01: backup.schedule must be an AWS Backup schedule expression, e.g. \"cron(0 3 * * ? *)\"."
  }
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
