variable "account_id" {
  description = "AWS account ID the example runs in (the emulator's is 123456789012)."
  type        = string
}

variable "env" {
  description = "Environment (DDB-NAME-01)."
  type        = string
  default     = "dev"
}

variable "primary_region" {
  description = "Primary region (the provider `aws`)."
  type        = string
  default     = "eu-west-1"
}

variable "secondary_region" {
  description = "DR region (the provider `aws.secondary`)."
  type        = string
  default     = "eu-central-1"
}

variable "global_tables" {
  description = "Global tables that get a pointer and may be failed over."
  type        = list(string)
  default     = ["dev-example-session"]
}

variable "regional_tables" {
  description = "Tables that are not global: backed up with a copy to the secondary region."
  type        = list(string)
  default     = ["dev-example-user"]
}

variable "route53_enabled" {
  description = "Create a zone and failover records."
  type        = bool
  default     = true
}

variable "backup_selection_enabled" {
  description = "Create the aws_backup_selection; the local emulator answers it with 500."
  type        = bool
  default     = true
}

variable "trusted_principal_arns" {
  description = "Who may assume the failover role (default: this account's root, i.e. its IAM policies decide)."
  type        = list(string)
  default     = null
}

variable "backup_schedule" {
  description = "When the regional tables are backed up."
  type        = string
  default     = "cron(0 3 * * ? *)"
}

variable "backup_global_tables" {
  description = "Back up the global tables too (in both regions: Security Hub DynamoDB.4)."
  type        = bool
  default     = false
}

variable "backup_copy_to_other_region" {
  description = "Copy each recovery point to the other region's vault."
  type        = bool
  default     = true
}

variable "backup_vault_lock" {
  description = "Vault lock of both backup vaults (min_retention_days, max_retention_days, changeable_for_days); null: none."
  type = object({
    min_retention_days  = number
    max_retention_days  = optional(number)
    changeable_for_days = optional(number)
  })
  default = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}

variable "fis_pause_replication_enabled" {
  description = "Create the AWS FIS template that pauses replication into the secondary region (the local emulator has no FIS)."
  type        = bool
  default     = false
}
