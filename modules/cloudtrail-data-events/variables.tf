variable "env" {
  description = "Environment (DDB-NAME-01): the trail is `{env}-dynamodb-data-events`."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-NAME-01: env must be lower case letters and digits (e.g. \"prod\")."
  }
}

variable "account_id" {
  description = "AWS account ID of the environment, for the trail and bucket ARNs (an input, so plans need no STS call)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-06: account_id must be the 12-digit AWS account ID of the environment."
  }
}

variable "bucket_name" {
  description = "Bucket for the trail's log files; null: `{env}-{account_id}-cloudtrail`."
  type        = string
  default     = null
}

variable "multi_region" {
  description = "Record every region of the account (DR regions too)."
  type        = bool
  default     = true
}

variable "kms_key_arn" {
  description = "KMS key for the log files (its policy must let cloudtrail.amazonaws.com use it); null: SSE-S3."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:", coalesce(var.kms_key_arn, "x")))
    error_message = "DDB-SEC-04: kms_key_arn must be a KMS key ARN, or null for SSE-S3."
  }
}

variable "retention_days" {
  description = "Days the log files are kept."
  type        = number
  default     = 400

  validation {
    condition     = var.retention_days >= 90
    error_message = "DDB-SEC-06: retention_days must be at least 90 (an investigation looks back further than a quarter)."
  }
}

variable "force_destroy" {
  description = "Let terraform destroy the bucket with its log files (tests only)."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
