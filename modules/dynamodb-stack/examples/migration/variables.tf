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
