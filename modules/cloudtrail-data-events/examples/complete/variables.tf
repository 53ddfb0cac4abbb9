variable "env" {
  description = "Environment."
  type        = string
  default     = "dev"
}

variable "region" {
  description = "Region."
  type        = string
  default     = "eu-west-1"
}

variable "account_id" {
  description = "AWS account ID of the environment."
  type        = string
  default     = "123456789012"
}

variable "force_destroy" {
  description = "Let destroy remove the bucket with its log files (tests)."
  type        = bool
  default     = false
}
