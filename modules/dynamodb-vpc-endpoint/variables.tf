variable "env" {
  description = "Environment (DDB-NAME-01), for the endpoint's tags."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-NAME-01: env must be lower case letters and digits (e.g. \"prod\")."
  }
}

variable "vpc_id" {
  description = "VPC whose applications reach DynamoDB (DDB-SEC-05)."
  type        = string

  validation {
    condition     = can(regex("^vpc-[0-9a-f]+$", var.vpc_id))
    error_message = "DDB-SEC-05: vpc_id must be a VPC ID (vpc-0123456789abcdef0)."
  }
}

variable "route_table_ids" {
  description = "Route tables of the subnets the applications run in: the gateway endpoint adds the DynamoDB prefix list route to each."
  type        = list(string)

  validation {
    condition     = length(var.route_table_ids) > 0 && alltrue([for id in var.route_table_ids : can(regex("^rtb-[0-9a-f]+$", id))])
    error_message = "DDB-SEC-05: route_table_ids must list at least one route table ID (rtb-0123456789abcdef0); without routes no traffic uses the endpoint."
  }
}

variable "region" {
  description = "Region of the endpoint; null means the provider's region."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags added to the endpoint."
  type        = map(string)
  default     = {}
}
