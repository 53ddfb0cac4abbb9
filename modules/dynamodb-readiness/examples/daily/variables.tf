variable "region" {
  description = "AWS region of the table and the readiness run."
  type        = string
  default     = "eu-west-1"
}

variable "readiness_zip_path" {
  description = "The readiness Lambda zip from `make readiness-zip` (bin/readiness.zip)."
  type        = string
}

variable "account_id" {
  description = "AWS account ID (12 digits): the key policy of the alarm topic names it (DDB-SEC-04)."
  type        = string
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}

variable "product" {
  description = "Product part of the table names (DDB-NAME-01)."
  type        = string
  default     = "hoge"
}

variable "contributor_insights_enabled" {
  description = "Contributor Insights on the tables (DDB-MON-02). The local emulator cannot apply it: set false there."
  type        = bool
  default     = true
}
