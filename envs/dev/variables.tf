variable "region" {
  description = "Primary region of the environment."
  type        = string
  default     = "eu-west-1"
}
