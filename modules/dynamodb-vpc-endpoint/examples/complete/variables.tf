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
