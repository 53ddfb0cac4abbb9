variable "env" {
  description = "Environment (DDB-NAME-01)."
  type        = string
  default     = "dev"
}

variable "product" {
  description = "Product name; tests pass a unique one."
  type        = string
  default     = "example"
}

variable "account_id" {
  description = "AWS account ID (12 digits): the key policy of the alarm topic names it (DDB-SEC-04)."
  type        = string
}

variable "account_alarms_enabled" {
  description = "Create the account-level alarms too (once per account and region)."
  type        = bool
  default     = true
}

variable "alarms" {
  description = "Overrides of the alarm defaults (see the module's `alarms` variable)."
  type = map(object({
    enabled             = optional(bool)
    threshold           = optional(number)
    period              = optional(number)
    evaluation_periods  = optional(number)
    datapoints_to_alarm = optional(number)
    treat_missing_data  = optional(string)
  }))
  default = {}
}

variable "deletion_protection_enabled" {
  description = "Deletion protection (DDB-PROT-01); turned off only for the apply before a destroy."
  type        = bool
  default     = true
}

variable "deletion_protection_disabled_reason" {
  description = "Reason deletion protection is off (DDB-PROT-01 exception)."
  type        = string
  default     = ""
}

variable "contributor_insights_enabled" {
  description = "Contributor Insights; the local emulator cannot apply it."
  type        = bool
  default     = true
}
