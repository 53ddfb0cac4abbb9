variable "region" {
  description = "AWS region of the tables."
  type        = string
  default     = "eu-west-1"
}

variable "env" {
  description = "Environment (DDB-NAME-01); routes.yaml names the dev tables."
  type        = string
  default     = "dev"
}

variable "account_id" {
  description = "AWS account ID of the env (the alarm topic's key policy names it, DDB-SEC-04)."
  type        = string
}
