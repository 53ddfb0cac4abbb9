terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # recovery_period_in_days on point_in_time_recovery arrived in 5.83.
      version = ">= 5.83.0"
    }
  }
}
