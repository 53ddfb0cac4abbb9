variable "account_id" {
  description = "AWS account ID (the key policy names it)."
  type        = string
  default     = "123456789012"
}
