################################################################################
# What is watched (DDB-MON-01)
################################################################################

variable "table_name" {
  description = "Name of the table to watch, `{env}-{product}-{usage}` (DDB-NAME-01). Alarm and dashboard names start with it."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+){2,}$", var.table_name)) || (trimspace(var.table_name_reason) != "" && can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.table_name)))
    error_message = "DDB-NAME-01: table_name must be {env}-{product}-{usage} in lower case (e.g. \"prod-hoge-user\"); pass module.table.table_name (an adopted legacy name also needs table_name_reason: module.table.exceptions[\"DDB-NAME-01\"])."
  }
}

variable "table_name_reason" {
  description = "The table's DDB-NAME-01 exception (modules/dynamodb-table's exceptions[\"DDB-NAME-01\"]) when it keeps a legacy name through name_override; empty otherwise. (Before v2.0.0 it was table_name_exception_reason.)"
  type        = string
  default     = ""
  nullable    = false
}

variable "gsi_names" {
  description = "The table's GSIs; each gets read and write throttle alarms with the GlobalSecondaryIndexName dimension (DDB-MON-01)."
  type        = list(string)
  default     = []
}

variable "throttle_cause_alarms" {
  description = <<-EOT
    Per-cause throttle alarms (opt-in; all off by default: existing callers plan no change), on the table and each GSI,
    from the metrics DynamoDB publishes per throttling reason (dimensions TableName, and GlobalSecondaryIndexName for a GSI):
    key_range: Read/WriteKeyRangeThroughputThrottleEvents (a hot key; both capacity modes);
    max_on_demand: Read/WriteMaxOnDemandThroughputThrottleEvents (the table's on_demand_throughput cap bites; on when a cap
    is set, DDB-CAP-04); account_limit: Read/WriteAccountLimitThrottleEvents (the per-table account quota of the region).
    Each alarm's description names the cause and the section of runbooks/throttling.md that fixes it.
  EOT
  type = object({
    key_range     = optional(bool, false)
    max_on_demand = optional(bool, false)
    account_limit = optional(bool, false)
  })
  default  = {}
  nullable = false
}

variable "replica_regions" {
  description = "Regions of the table's global-table replicas; each gets a ReplicationLatency alarm (dimensions TableName, ReceivingRegion; DDB-MON-01, DDB-DR-01)."
  type        = list(string)
  default     = []
}

variable "billing_mode" {
  description = "The table's billing mode. PROVISIONED adds consumed-vs-provisioned capacity alarms for reads and writes (DDB-CAP-01, DDB-MON-01)."
  type        = string
  default     = "PAY_PER_REQUEST"

  validation {
    condition     = contains(["PAY_PER_REQUEST", "PROVISIONED"], var.billing_mode)
    error_message = "DDB-CAP-01: billing_mode must be PAY_PER_REQUEST or PROVISIONED (pass module.table.billing_mode)."
  }
}

variable "key_operations" {
  description = <<-EOT
    Operations whose ThrottledRequests and SystemErrors are summed by metric math. DynamoDB publishes both metrics
    only per (TableName, Operation), and CloudWatch does not aggregate over a missing dimension, so an alarm on
    TableName alone would never fire. An alarm may hold at most 10 metrics.
  EOT
  type        = list(string)
  default     = ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems"]

  validation {
    condition     = length(var.key_operations) >= 1 && length(var.key_operations) <= 10 && length(distinct(var.key_operations)) == length(var.key_operations)
    error_message = "DDB-MON-01: key_operations must list 1 to 10 distinct DynamoDB operations (a CloudWatch alarm holds at most 10 metrics), e.g. [\"GetItem\", \"Query\"]."
  }
}

variable "latency_thresholds_ms" {
  description = <<-EOT
    SuccessfulRequestLatency alarms: operation => threshold in milliseconds (Average over each minute). DynamoDB answers
    single-digit milliseconds in-region; the defaults are several times that, so a sustained breach (10 minutes) is a real
    degradation (hot partition, large items, a regional issue) and not noise. Set per table from its own baseline.
  EOT
  type        = map(number)
  default     = { GetItem = 25, PutItem = 40, UpdateItem = 40, Query = 60 }

  validation {
    condition     = alltrue([for op, ms in var.latency_thresholds_ms : ms > 0])
    error_message = "DDB-MON-01: latency_thresholds_ms values must be positive milliseconds (e.g. { GetItem = 25 })."
  }
}

variable "stream_consumers" {
  description = "Stream consumers of the table (from modules/stream-consumer): their IteratorAge and DLQ depth are graphed on the table's dashboard. Their alarms live in that module."
  type = list(object({
    function_name = string
    dlq_name      = string
  }))
  default = []
}

################################################################################
# Thresholds
################################################################################

variable "alarms" {
  description = <<-EOT
    Overrides of the alarm defaults, keyed by alarm kind; each field is optional. Defaults (period seconds,
    datapoints to alarm / evaluation periods, threshold, treat_missing_data and why):

    | kind | statistic | threshold | period | M/N | missing data | why missing data is treated so |
    |---|---|---|---|---|---|---|
    | throttled_requests (mandatory) | Sum over key_operations | > 0 | 60 | 5/5 | notBreaching | published only when a request is throttled |
    | read_throttle_events, write_throttle_events | Sum | > 0 | 60 | 5/5 | notBreaching | published only when throttling happens |
    | gsi_read_throttle_events, gsi_write_throttle_events | Sum | > 0 | 60 | 5/5 | notBreaching | same, per GSI |
    | key_range_throttle_events, max_on_demand_throttle_events, account_limit_throttle_events (throttle_cause_alarms) | Sum | > 0 | 60 | 5/5 | notBreaching | published only when throttling of that cause happens; table and each GSI |
    | system_errors | Sum over key_operations | > 0 | 60 | 5/5 | notBreaching | published only when DynamoDB returns a 500 |
    | latency | Average | latency_thresholds_ms | 60 | 10/10 | notBreaching | no requests means no latency to judge |
    | consumed_read_capacity, consumed_write_capacity (PROVISIONED) | % of provisioned | > 80 | 60 | 10/10 | notBreaching | no traffic is 0% |
    | replication_latency | Average (ms) | > 30000 | 60 | 10/10 | ignore | no writes, no data: says nothing about the replica, so keep the last state |
    | user_errors (account) | Sum | > 10 | 60 | 10/10 | notBreaching | published only when a request gets a 400 |
    | account_read_capacity_utilization, account_write_capacity_utilization (account) | Maximum (%) | > 80 | 300 | 2/2 | notBreaching | published only for provisioned capacity |

    The mandatory throttled_requests alarm cannot be disabled (DDB-MON-01).
  EOT
  type = map(object({
    enabled             = optional(bool)
    threshold           = optional(number)
    period              = optional(number)
    evaluation_periods  = optional(number)
    datapoints_to_alarm = optional(number)
    treat_missing_data  = optional(string)
  }))
  default = {}

  validation {
    condition = alltrue([for k, _ in var.alarms : contains([
      "throttled_requests", "read_throttle_events", "write_throttle_events", "gsi_read_throttle_events", "gsi_write_throttle_events",
      "key_range_throttle_events", "max_on_demand_throttle_events", "account_limit_throttle_events",
      "system_errors", "latency", "consumed_read_capacity", "consumed_write_capacity", "replication_latency",
      "user_errors", "account_read_capacity_utilization", "account_write_capacity_utilization",
    ], k)])
    error_message = "DDB-MON-01: alarms keys must be alarm kinds listed in the variable's description (e.g. \"read_throttle_events\")."
  }

  validation {
    condition     = try(var.alarms["throttled_requests"].enabled, null) != false
    error_message = "DDB-MON-01: the throttled_requests alarm is mandatory on every table; raise its threshold instead of disabling it."
  }

  validation {
    condition     = alltrue([for k, a in var.alarms : a.period == null || try(a.period % 60 == 0 && a.period > 0, false)])
    error_message = "DDB-MON-01: alarms[*].period must be a positive multiple of 60 seconds (DynamoDB metrics are published per minute)."
  }

  validation {
    condition     = alltrue([for k, a in var.alarms : a.threshold == null || try(a.threshold >= 0, false)])
    error_message = "DDB-MON-01: alarms[*].threshold must be >= 0."
  }

  validation {
    condition     = alltrue([for k, a in var.alarms : a.treat_missing_data == null || contains(["breaching", "notBreaching", "ignore", "missing"], coalesce(a.treat_missing_data, "missing"))])
    error_message = "DDB-MON-01: alarms[*].treat_missing_data must be breaching, notBreaching, ignore or missing."
  }
}

variable "account_alarms_enabled" {
  description = "Create the account-level alarms (UserErrors, AccountProvisionedRead/WriteCapacityUtilization). They have no table dimension: turn this on for exactly one table per account and region (modules/dynamodb-stack does)."
  type        = bool
  default     = false
}

variable "account_alarm_prefix" {
  description = "Name prefix of the account-level alarms; null: `{env}-dynamodb-account`, env taken from table_name."
  type        = string
  default     = null
}

################################################################################
# Notification
################################################################################

variable "create_sns_topic" {
  description = "Create the topic `{table_name}-alarms` for the notifications; false: pass sns_topic_arn (e.g. one topic per env)."
  type        = bool
  default     = true
}

variable "sns_topic_arn" {
  description = "SNS topic that receives alarm and OK notifications, with create_sns_topic = false."
  type        = string
  default     = null

  validation {
    condition     = var.create_sns_topic || var.sns_topic_arn != null
    error_message = "DDB-MON-01: with create_sns_topic = false, pass sns_topic_arn: alarms must notify someone."
  }

  validation {
    condition     = var.sns_topic_arn == null || can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$", coalesce(var.sns_topic_arn, "x")))
    error_message = "DDB-MON-01: sns_topic_arn must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME), or null to create one."
  }
}

variable "sns_kms_master_key_id" {
  description = "A customer managed key of your own (key ARN) for the topic the module creates; its policy must let cloudwatch.amazonaws.com use kms:Decrypt and kms:GenerateDataKey* (alias/aws/sns cannot). null: the module creates a key with that policy (needs account_id)."
  type        = string
  default     = null
}

variable "account_id" {
  description = "AWS account ID of the table and its alarms, for the key policy of the topic the module creates (DDB-SEC-04). Needed with create_sns_topic and no sns_kms_master_key_id."
  type        = string
  default     = null

  validation {
    condition     = !var.create_sns_topic || var.sns_kms_master_key_id != null || can(regex("^[0-9]{12}$", coalesce(var.account_id, "x")))
    error_message = "DDB-SEC-04: the topic this module creates is encrypted with a customer managed key whose policy names the account: set account_id to the 12-digit AWS account ID, or pass sns_kms_master_key_id (a key of your own), or pass sns_topic_arn with create_sns_topic = false."
  }
}

variable "ok_actions_enabled" {
  description = "Notify the topic when an alarm returns to OK too, so the on-call engineer sees recovery without opening the console."
  type        = bool
  default     = true
}

variable "dashboard_enabled" {
  description = "Create the table's CloudWatch dashboard (named like the table)."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags for the alarms and the topic."
  type        = map(string)
  default     = {}
}
