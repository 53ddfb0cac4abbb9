variable "name_prefix" {
  description = "Name prefix of the alarms, e.g. `prod-dynamodb-account` (modules/dynamodb-stack: `{env}-dynamodb-account`)."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.-]{1,200}$", var.name_prefix))
    error_message = "DDB-MON-01: name_prefix must be 1 to 200 of a-z A-Z 0-9 _ . - (e.g. \"prod-dynamodb-account\"): alarm names start with it."
  }
}

variable "sns_topic_arn" {
  description = "SNS topic that receives alarm and OK notifications."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$", var.sns_topic_arn))
    error_message = "DDB-MON-01: sns_topic_arn must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME): alarms must notify someone."
  }
}

variable "alarms" {
  description = "Overrides of the alarm defaults, keyed by kind: `user_errors`, `account_read_capacity_utilization`, `account_write_capacity_utilization` (defaults and reasons in modules/dynamodb-alarms' `alarms` variable, which checks the values). Other kinds (a table's) are ignored, so the same map serves both modules."
  type = map(object({
    enabled             = optional(bool)
    threshold           = optional(number)
    period              = optional(number)
    evaluation_periods  = optional(number)
    datapoints_to_alarm = optional(number)
    treat_missing_data  = optional(string)
  }))
  default  = {}
  nullable = false
}

variable "ok_actions_enabled" {
  description = "Notify the topic when an alarm returns to OK too."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags for the alarms."
  type        = map(string)
  default     = {}
}
