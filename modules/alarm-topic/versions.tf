terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Tested with 5.100. 6.x accepted (docs/provider-6.md); the upper bound keeps 7.0 from arriving unreviewed.
      version = ">= 5.83.0, < 7.0.0"
    }
  }
}
