# The dev environment: the hoge tables with every guideline default.
terraform {
  # Partial configuration: pass the state bucket at init, e.g.
  #   terraform init -backend-config="bucket=hoge-terraform-state-dev"
  backend "s3" {
    key          = "dynamodb/dev.tfstate"
    region       = "eu-west-1"
    encrypt      = true
    use_lockfile = true
  }
}

provider "aws" {
  region = var.region
}

module "stack" {
  source = "../../modules/dynamodb-stack"

  permissions_boundary_arn = var.permissions_boundary_arn

  env     = "dev"
  product = "hoge"
  tables  = yamldecode(file("${path.module}/../tables.yaml"))

  # IAM (DDB-SEC-01..03) once the account is known; order is multi-tenant (DDB-SEC-02).
  access = var.account_id == null ? null : {
    account_id    = var.account_id
    tenant_tables = { order = { key_prefix = "TENANT#", index_key_delimiter = "#" } }
  }

  # Stream consumers (DDB-STREAM-04) when the zip is given: `make consumer-zip`.
  stream_consumer = var.consumer_zip == null ? null : { filename = var.consumer_zip }

  # replica_regions in tables.yaml are created in prod only (envs/prod/replicas.tf).
}
