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
