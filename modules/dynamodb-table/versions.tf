terraform {
  # Validation messages name the table (they refer to other inputs): 1.9.
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # recovery_period_in_days on point_in_time_recovery arrived in 5.83; tested
      # with 5.100. 6.x accepted (docs/provider-6.md); the upper bound keeps 7.0 from arriving unreviewed.
      version = ">= 5.83.0, < 7.0.0"
    }
  }
}
