# The prod environment: the hoge tables with every guideline default.
terraform {
  # Partial configuration: pass the state bucket at init, e.g.
  #   terraform init -backend-config="bucket=hoge-terraform-state-prod"
  backend "s3" {
    key          = "dynamodb/prod.tfstate"
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

  env     = "prod"
  product = "hoge"
  tables  = yamldecode(file("${path.module}/../tables.yaml"))

  # IAM (DDB-SEC-01..03); order is multi-tenant (DDB-SEC-02).
  access = {
    account_id    = var.account_id
    tenant_tables = { order = { key_prefix = "TENANT#", index_key_delimiter = "#" } }
    # The operator reads and inverts this env's Route 53 health checks only
    # (dynops dr failover --health-check); none until modules/dr gets route53.
    health_check_ids = values(module.dr.health_check_ids)
  }

  # Stream consumers (DDB-STREAM-04) when the zip is given: `make consumer-zip`.
  stream_consumer = var.consumer_zip == null ? null : { filename = var.consumer_zip }
}
