################################################################################
# The stream and the function (DDB-STREAM-03)
################################################################################

variable "name" {
  description = "Name of the consumer: the function, its role, log group and DLQ are named after it (e.g. `prod-hoge-user-consumer`)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)+$", var.name)) && length(var.name) <= 60
    error_message = "DDB-NAME-01: name must be lower case words joined by '-' (e.g. \"prod-hoge-user-consumer\"), at most 60 characters (the DLQ adds \"-dlq\")."
  }
}

variable "stream_arn" {
  description = "ARN of the table's DynamoDB stream (module.table.stream_arn). The function may read this stream and no other."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[^/]+/stream/.+$", var.stream_arn))
    error_message = "DDB-STREAM-04: stream_arn must be a DynamoDB stream ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL); turn streams on for the table and pass module.table.stream_arn."
  }
}

variable "filename" {
  description = "Path of the function's zip (a Go `bootstrap` for provided.al2023, built outside terraform, e.g. `make consumer-zip`). Give filename or existing_function, not both."
  type        = string
  default     = null
}

variable "source_code_hash" {
  description = "Base64 SHA-256 of the zip; null: computed from filename (filebase64sha256). Changing it redeploys the code."
  type        = string
  default     = null
}

variable "existing_function" {
  description = "Use an existing function instead of building one: its ARN, and the name of its execution role, which gets the stream-read and DLQ-send permissions (and nothing else) from this module."
  type = object({
    arn       = string
    role_name = string
  })
  default = null

  validation {
    condition     = (var.existing_function == null) != (var.filename == null)
    error_message = "DDB-STREAM-03: give exactly one of filename (a zip to deploy) or existing_function ({ arn, role_name })."
  }

  validation {
    condition     = var.existing_function == null || can(regex("^arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:[A-Za-z0-9_-]+(:[A-Za-z0-9_$-]+)?$", try(var.existing_function.arn, "")))
    error_message = "DDB-STREAM-03: existing_function.arn must be a Lambda function ARN (arn:aws:lambda:REGION:ACCOUNT:function:NAME)."
  }
}

variable "environment_variables" {
  description = "Environment of the function the module builds (e.g. PROCESSED_TABLE for the example consumer)."
  type        = map(string)
  default     = {}
}

variable "handler_policy_statements" {
  description = "IAM statements for what the handler itself does (e.g. PutItem on its idempotency table), attached to the role the module creates. The module itself grants only stream read, DLQ send and logs."
  type = list(object({
    sid       = string
    actions   = list(string)
    resources = list(string)
  }))
  default = []
}

variable "timeout" {
  description = "Function timeout in seconds."
  type        = number
  default     = 30
}

variable "memory_size" {
  description = "Function memory in MB."
  type        = number
  default     = 128
}

variable "log_retention_in_days" {
  description = "Retention of the function's log group."
  type        = number
  default     = 30
}

################################################################################
# The event source mapping (DDB-STREAM-03/04)
################################################################################

variable "starting_position" {
  description = "Where a new mapping starts reading: LATEST or TRIM_HORIZON (the oldest record still in the 24 h stream)."
  type        = string
  default     = "LATEST"

  validation {
    condition     = contains(["LATEST", "TRIM_HORIZON"], var.starting_position)
    error_message = "DDB-STREAM-04: starting_position must be LATEST or TRIM_HORIZON."
  }
}

variable "batch_size" {
  description = "Records per invocation (1 to 10000)."
  type        = number
  default     = 100

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000
    error_message = "DDB-STREAM-04: batch_size must be 1 to 10000."
  }
}

variable "maximum_retry_attempts" {
  description = <<-EOT
    Retries of a failing batch before its records go to the DLQ (DDB-STREAM-04). Bounded: the AWS default -1 retries
    until the record expires (24 h) and blocks the shard all that time. 3 retries plus bisection isolate a poison
    record in a batch of 100 within minutes while a transient failure (throttling, a deploy) still succeeds.
  EOT
  type        = number
  default     = 3

  validation {
    condition     = var.maximum_retry_attempts >= 0 && var.maximum_retry_attempts <= 10000 && floor(var.maximum_retry_attempts) == var.maximum_retry_attempts
    error_message = "DDB-STREAM-04: maximum_retry_attempts must be a whole number from 0 to 10000; -1 (infinite, the AWS default) blocks the shard until records expire."
  }
}

variable "maximum_record_age_in_seconds" {
  description = <<-EOT
    Records older than this are sent to the DLQ instead of processed (DDB-STREAM-04). Bounded: the AWS default -1 keeps
    them until the stream drops them at 24 h, silently. 3600 (1 h) leaves the on-call engineer 23 h to redrive from the
    DLQ before anything is lost, and keeps a stuck shard from lagging more than an hour.
  EOT
  type        = number
  default     = 3600

  validation {
    condition     = var.maximum_record_age_in_seconds >= 60 && var.maximum_record_age_in_seconds <= 86400
    error_message = "DDB-STREAM-04: maximum_record_age_in_seconds must be 60 to 86400 (the stream keeps records 24 h); -1 (the AWS default) lets records expire unseen."
  }
}

variable "report_batch_item_failures" {
  description = "function_response_types = [\"ReportBatchItemFailures\"]: the handler reports the first failed record, so only it and later records are retried (the example consumer does)."
  type        = bool
  default     = true
}

variable "parallelization_factor" {
  description = "Concurrent batches per shard (1 to 10). Order per item key is kept at any value."
  type        = number
  default     = 1

  validation {
    condition     = var.parallelization_factor >= 1 && var.parallelization_factor <= 10
    error_message = "DDB-STREAM-04: parallelization_factor must be 1 to 10."
  }
}

variable "filter_patterns" {
  description = "Event filter patterns (DDB-STREAM-03), each a JSON string, e.g. `jsonencode({ eventName = [\"INSERT\"] })` for inserts only. Empty: every record."
  type        = list(string)
  default     = []

  validation {
    condition     = length(var.filter_patterns) <= 5 && alltrue([for p in var.filter_patterns : can(jsondecode(p))])
    error_message = "DDB-STREAM-03: filter_patterns must be at most 5 JSON documents, e.g. jsonencode({ eventName = [\"INSERT\"] })."
  }
}

################################################################################
# The DLQ (DDB-STREAM-04)
################################################################################

variable "dlq_kms_master_key_id" {
  description = "KMS key for the DLQ; null: SQS-managed encryption (SSE-SQS). Records in the DLQ are metadata (shard, sequence numbers), not item images."
  type        = string
  default     = null
}

variable "dlq_message_retention_seconds" {
  description = "How long failed-record messages stay in the DLQ: 14 days (the SQS maximum) for the redrive (runbooks, `dynops dlq redrive`)."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dlq_message_retention_seconds >= 86400 && var.dlq_message_retention_seconds <= 1209600
    error_message = "DDB-STREAM-05: dlq_message_retention_seconds must be 1 to 14 days (86400 to 1209600); keep the 14-day default so a redrive is possible after a weekend."
  }
}

################################################################################
# Alarms (DDB-STREAM-05)
################################################################################

variable "alarm_sns_topic_arn" {
  description = "SNS topic the consumer's alarms notify (on ALARM and OK), e.g. the env's topic from the stack."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$", var.alarm_sns_topic_arn))
    error_message = "DDB-STREAM-05: alarm_sns_topic_arn must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)."
  }
}

variable "iterator_age_warning_ms" {
  description = <<-EOT
    IteratorAge (Maximum) warning threshold, ms, 5 minutes in a row (DDB-STREAM-05). 300000 (5 min): a healthy consumer
    reads within seconds, so 5 minutes of lag means retries or throttling are holding a shard.
  EOT
  type        = number
  default     = 300000
}

variable "iterator_age_critical_ms" {
  description = <<-EOT
    IteratorAge (Maximum) critical threshold, ms, 3 minutes in a row (DDB-STREAM-05). 1800000 (30 min): half of
    maximum_record_age_in_seconds, so there is time to act before records are shunted to the DLQ, and far below the
    24 h after which the stream drops records for good. Must be below maximum_record_age_in_seconds.
  EOT
  type        = number
  default     = 1800000

  validation {
    condition     = var.iterator_age_critical_ms > var.iterator_age_warning_ms && var.iterator_age_critical_ms < var.maximum_record_age_in_seconds * 1000 && var.iterator_age_critical_ms < 86400000
    error_message = "DDB-STREAM-05: iterator_age_critical_ms must be above iterator_age_warning_ms and below maximum_record_age_in_seconds (in ms) and 24 h; lower it."
  }
}

variable "dlq_oldest_message_age_seconds" {
  description = "ApproximateAgeOfOldestMessage threshold of the DLQ, seconds (DDB-STREAM-05). 259200 (3 days): a message nobody redrove in 3 days means the depth alarm was missed; at dlq_message_retention_seconds it is deleted."
  type        = number
  default     = 259200

  validation {
    condition     = var.dlq_oldest_message_age_seconds > 0 && var.dlq_oldest_message_age_seconds < var.dlq_message_retention_seconds
    error_message = "DDB-STREAM-05: dlq_oldest_message_age_seconds must be positive and below dlq_message_retention_seconds, so the alarm fires before messages are deleted."
  }
}

variable "tags" {
  description = "Tags for every resource."
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
