variable "region" {
  description = "Region the emulator stands in for."
  type        = string
  default     = "eu-west-1"
}

variable "secondary_region" {
  description = "Second region on the emulator, standing in for the DR region."
  type        = string
  default     = "eu-central-1"
}

variable "consumer_zip" {
  description = "Path of the stream consumer zip (`make consumer-zip` writes bin/consumer.zip); null: no stream consumers."
  type        = string
  default     = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}
