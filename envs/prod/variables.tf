variable "region" {
  description = "Primary region of the environment."
  type        = string
  default     = "eu-west-1"
}

variable "account_id" {
  description = "AWS account ID of prod: the IAM policies (modules/dynamodb-access) and the failover role (modules/dr) are scoped to it (DDB-SEC-03)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-03: account_id must be the 12-digit AWS account ID of prod."
  }
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

variable "consumer_zip" {
  description = "Path of the stream consumer zip (`make consumer-zip` writes bin/consumer.zip); null: no stream consumers."
  type        = string
  default     = null
}

variable "network" {
  description = "The application VPC and the route tables of its subnets, for the DynamoDB gateway endpoint (DDB-SEC-05); null: no endpoint (the policy check then fails the root)."
  type = object({
    vpc_id          = string
    route_table_ids = list(string)
  })
  default = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for every role this root creates (the suite against AWS sets it through TF_VAR_permissions_boundary_arn from modules/ci-test-role); null: none."
  type        = string
  default     = null
}

variable "readiness" {
  description = "The daily readiness run (modules/dynamodb-readiness): the Lambda zip (`make readiness-zip`), the usage in envs/tables.yaml whose table the restore test restores (PITR on), and the schedule; null: none."
  type = object({
    zip_path            = string
    restore_table_usage = string
    schedule_expression = optional(string, "rate(1 day)")
  })
  default = null

  validation {
    condition     = var.readiness == null || contains(keys(yamldecode(file("${path.module}/../tables.yaml"))), try(var.readiness.restore_table_usage, ""))
    error_message = "DDB-PITR-01: readiness.restore_table_usage must be a usage of envs/tables.yaml (e.g. \"user\"): the restore test restores that table."
  }
}
