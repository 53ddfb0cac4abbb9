terraform {
  # The S3 backend's use_lockfile (state locking without DynamoDB) arrived in 1.11.
  required_version = ">= 1.11.0, < 2.0.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Both provider majors (docs/provider-6.md); .terraform.lock.hcl beside
      # this file picks the exact version (5.100.0) and records its checksums:
      # `terraform init -upgrade` is the reviewed step that moves it.
      version = ">= 5.83.0, < 7.0.0"
    }
  }
}
