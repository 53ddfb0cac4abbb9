variable "env" {
  description = "Environment."
  type        = string
  default     = "prod"
}

variable "product" {
  description = "Product that owns the tables."
  type        = string
  default     = "hoge"
}

variable "region" {
  description = "Region."
  type        = string
  default     = "eu-west-1"
}

variable "account_id" {
  description = "Account of the tables and the image repository."
  type        = string
  default     = "123456789012"
}

variable "subnet_ids" {
  description = "Private subnets of the tasks."
  type        = list(string)
  default     = ["subnet-0123456789abcdef0"]
}

variable "security_group_ids" {
  description = "Security groups of the tasks."
  type        = list(string)
  default     = ["sg-0123456789abcdef0"]
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}
