terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Env roots pin the exact provider version (modules declare a minimum).
      version = "5.100.0"
    }
  }
}
