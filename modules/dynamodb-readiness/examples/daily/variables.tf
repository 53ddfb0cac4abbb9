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
