terraform {
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.83.0, < 7.0.0"
      # aws: the primary region; aws.secondary: the DR region. Terraform cannot
      # create providers from a list, so the module takes a fixed pair.
      configuration_aliases = [aws.secondary]
    }
  }
}
