variable "region" {
  description = "Region of the provider (IAM is global)."
  type        = string
  default     = "eu-west-1"
}

variable "github_repository" {
  description = "OWNER/NAME of the repository running the workflow."
  type        = string
  default     = "hoge-inc/dynops"
}

variable "account_id" {
  description = "The sandbox account's ID."
  type        = string
  default     = "123456789012"
}
