provider "aws" {
  region = "eu-west-1"
}

# The runner of one env: `dynops runbook run --in-aws` starts runbooks as
# Fargate tasks that run with the dynops-operator's rights on prod-* tables
# and keep their state under acme-oncall/dynops/runbooks/.
module "runner" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  env        = var.env
  product    = var.product
  account_id = var.account_id

  image              = "${var.account_id}.dkr.ecr.eu-west-1.amazonaws.com/dynops:v1.4.0"
  subnet_ids         = var.subnet_ids
  security_group_ids = var.security_group_ids
  state_bucket       = { name = var.state_bucket }

  log_retention_in_days = 400
  kms_key_arn           = var.kms_key_arn
}
