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

variable "account_id" {
  description = "AWS account ID (12 digits): the key policy of the alarm topic names it (DDB-SEC-04)."
  type        = string
}
