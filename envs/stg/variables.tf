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

variable "consumer_zip" {
  description = "Path of the stream consumer zip (`make consumer-zip` writes bin/consumer.zip); null: no stream consumers."
  type        = string
  default     = null
}
