terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # deletion_protection_enabled on aws_dynamodb_table_replica; tested with 5.100.
      version = ">= 5.83.0, < 7.0.0"
    }
  }
}
