variable "region" {
  description = "AWS region of the tables and the bucket."
  type        = string
  default     = "eu-west-1"
}

variable "scheduler_zip_path" {
  description = "The scheduler Lambda zip from `make export-scheduler-zip` (bin/export-scheduler.zip)."
  type        = string
}

variable "account_id" {
  description = "AWS account ID (12 digits): the key policy of the alarm topic names it (DDB-SEC-04)."
  type        = string
}
