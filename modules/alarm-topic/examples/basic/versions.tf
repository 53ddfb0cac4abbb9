terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Tested with 5.100. The upper bound keeps a major release from arriving unreviewed.
      version = ">= 5.83.0, < 6.0.0"
    }
  }
}
