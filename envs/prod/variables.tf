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
variable "secondary_region" {
  description = "DR region: where the global tables' replicas are (replica_regions in envs/tables.yaml) and backups are copied."
  type        = string
  default     = "eu-central-1"
}

variable "failover_trusted_principal_arns" {
  description = "Who may assume the failover role for `dynops dr` (e.g. the on-call SSO role ARN)."
  type        = list(string)
}
