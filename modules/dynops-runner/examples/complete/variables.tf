variable "env" {
  description = "Environment."
  type        = string
  default     = "prod"
}

variable "product" {
  description = "Product."
  type        = string
  default     = "hoge"
}

variable "account_id" {
  description = "AWS account ID."
  type        = string
  default     = "123456789012"
}

variable "subnet_ids" {
  description = "Private subnets of the task."
  type        = list(string)
  default     = ["subnet-0123456789abcdef0"]
}

variable "security_group_ids" {
  description = "Security groups of the task (HTTPS egress)."
  type        = list(string)
  default     = ["sg-0123456789abcdef0"]
}

variable "state_bucket" {
  description = "The team's runbook state bucket."
  type        = string
  default     = "acme-oncall"
}

variable "kms_key_arn" {
  description = "KMS key of the log group; null: CloudWatch Logs' own encryption."
  type        = string
  default     = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}
