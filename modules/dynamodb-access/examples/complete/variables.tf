variable "env" {
  description = "Environment (DDB-NAME-01, DDB-SEC-03)."
  type        = string
  default     = "dev"
}

variable "product" {
  description = "Product name."
  type        = string
  default     = "example"
}

variable "account_id" {
  description = "AWS account ID of the tables."
  type        = string
  default     = "123456789012"
}

variable "permissions_boundary_arn" {
  description = "Optional permissions boundary for the roles."
  type        = string
  default     = null
}

variable "health_check_ids" {
  description = "Route 53 health check IDs of the env (modules/dr output health_check_ids) the operator may invert."
  type        = list(string)
  default     = []
}

variable "fis_experiment_template_ids" {
  description = "AWS FIS experiment template IDs of the env (modules/dr output fis_pause_replication_template_id) the operator may start."
  type        = list(string)
  default     = []
}

variable "audit_log_group" {
  description = "Passed to the module: the central audit copy's log group (null: none)."
  type = object({
    name                   = optional(string)
    kms_key_arn            = string
    retention_in_days      = optional(number, 400)
    data_protection_policy = optional(string)
  })
  default = null
}
