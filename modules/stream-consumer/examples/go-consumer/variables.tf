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

variable "filename" {
  description = "The consumer zip built by `make consumer-zip`."
  type        = string
  default     = "../../../../bin/consumer.zip"
}

variable "accept_poison" {
  description = "The DLQ drill's fix: true makes the handler accept poison records."
  type        = bool
  default     = false
}

variable "filter_patterns" {
  description = "Event filter patterns (JSON strings), e.g. inserts only."
  type        = list(string)
  default     = []
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

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}
