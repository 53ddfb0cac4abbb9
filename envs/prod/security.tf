# This root manages the prod environment (policies/security.rego): every
# DynamoDB ARN names prod-*, and the root carries the network and audit controls.
resource "terraform_data" "dynops_env_root" {
  input = { env = "prod" }
}

# DDB-SEC-05: applications reach DynamoDB through a VPC gateway endpoint, with
# no endpoint policy (control stays in IAM).
module "dynamodb_endpoint" {
  source = "../../modules/dynamodb-vpc-endpoint"
  count  = var.network == null ? 0 : 1

  env             = "prod"
  vpc_id          = var.network.vpc_id
  route_table_ids = var.network.route_table_ids
}

# DDB-SEC-06: CloudTrail records DynamoDB control- and data-plane calls.
module "cloudtrail" {
  source = "../../modules/cloudtrail-data-events"
  count  = var.account_id == null ? 0 : 1

  env        = "prod"
  account_id = var.account_id
}
