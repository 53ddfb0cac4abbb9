variable "region" {
  description = "Region of the table."
  type        = string
  default     = "eu-west-1"
}

variable "replica_region" {
  description = "Region of its replica."
  type        = string
  default     = "eu-central-1"
}

variable "env" {
  description = "Environment (DDB-NAME-01)."
  type        = string
  default     = "dev"
}

variable "product" {
  description = "Product name; tests pass a unique one."
  type        = string
  default     = "example"
}

variable "deletion_protection_enabled" {
  description = "Deletion protection of the table and the replica (DDB-PROT-01); turned off only for the apply before a destroy."
  type        = bool
  default     = true
}

variable "deletion_protection_disabled_reason" {
  description = "Reason deletion protection is off (DDB-PROT-01 exception)."
  type        = string
  default     = ""
}

variable "point_in_time_recovery" {
  description = "The table's PITR (DDB-PITR-01). A period under 35 days is refused by the replica: a replica's period cannot be set."
  type = object({
    enabled                 = optional(bool, true)
    recovery_period_in_days = optional(number, 35)
  })
  default = {}
}

variable "point_in_time_recovery_reason" {
  description = "Why the table's PITR is off or keeps fewer than 35 days (DDB-PITR-01 exception)."
  type        = string
  default     = ""
}
