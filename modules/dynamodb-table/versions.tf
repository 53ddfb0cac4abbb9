terraform {
  # Validation messages name the table (they refer to other inputs): 1.9.
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # recovery_period_in_days on point_in_time_recovery arrived in 5.83; tested
      # with 5.100. The upper bound keeps a major release from arriving unreviewed.
      version = ">= 5.83.0, < 6.0.0"
    }
  }
}
