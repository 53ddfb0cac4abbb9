variable "region" {
  description = "Primary region of the environment."
  type        = string
  default     = "eu-west-1"
}

variable "account_id" {
  description = "AWS account ID of the environment, for the IAM policies of modules/dynamodb-access; null: no IAM policies."
  type        = string
  default     = null
}
