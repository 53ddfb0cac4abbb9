terraform {
  # The S3 backend's use_lockfile (state locking without DynamoDB) arrived in 1.11.
  required_version = ">= 1.11.0, < 2.0.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Env roots pin the exact provider version (modules declare a range below 6.0);
      # .terraform.lock.hcl beside this file records its checksums.
      version = "5.100.0"
    }
  }
}
