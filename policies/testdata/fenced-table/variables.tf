variable "env" {
  description = "Environment (the table name's first word)."
  type        = string
}

variable "product" {
  description = "Product (a unique ID per test run)."
  type        = string
}

variable "account_id" {
  description = "Account of the table and of the role its policy names."
  type        = string
}

variable "deletion_protection_enabled" {
  description = "Deletion protection (the harness turns it off with a reason before a destroy)."
  type        = bool
  default     = true
}

variable "deletion_protection_disabled_reason" {
  description = "Why deletion protection is off (the harness's teardown)."
  type        = string
  default     = ""
}

variable "contributor_insights_enabled" {
  description = "Contributor Insights (the emulator cannot apply it)."
  type        = bool
  default     = true
}
