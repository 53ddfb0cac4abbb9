variable "name" {
  description = "Topic name, e.g. `{env}-{product}-dynamodb-alarms` (also the key alias, `alias/{name}`)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,240}$", var.name))
    error_message = "DDB-NAME-01: name must be lower case letters, digits and '-' (e.g. \"dev-hoge-dynamodb-alarms\")."
  }
}

variable "account_id" {
  description = "AWS account ID of the topic and the alarms: the key policy the module writes names it (administration, and the only account whose alarms may use the key). May be null only with kms_key_arn (a key of your own)."
  type        = string
  default     = null

  validation {
    condition     = var.account_id == null ? var.kms_key_arn != null : can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-04: account_id must be the 12-digit AWS account ID of the topic (e.g. \"123456789012\"): the topic's customer managed key policy names it. It may be left out only with kms_key_arn, a key of your own."
  }
}

variable "alarm_name_prefix" {
  description = "Prefix of the names of the alarms that may use the topic's key (aws:SourceArn), e.g. `dev-hoge-`; \"\": every alarm of this account and region. A prefix that misses an alarm drops its notifications silently, so the stack, whose alarms include account-level and adopted legacy names, keeps \"\"."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]*$", var.alarm_name_prefix))
    error_message = "DDB-SEC-04: alarm_name_prefix must be an alarm name prefix without wildcards (e.g. \"dev-hoge-\"), or \"\" for every alarm of the account and region."
  }
}

variable "kms_key_arn" {
  description = "A customer managed key of your own for the topic (its policy must let cloudwatch.amazonaws.com use kms:Decrypt and kms:GenerateDataKey*); null: the module creates one with that policy."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/", coalesce(var.kms_key_arn, "x")))
    error_message = "DDB-SEC-04: kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), not an alias: CloudWatch cannot publish to a topic under alias/aws/sns."
  }
}

variable "tags" {
  description = "Tags for the topic and the key."
  type        = map(string)
  default     = {}
}
