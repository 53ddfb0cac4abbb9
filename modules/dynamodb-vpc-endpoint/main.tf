# DDB-SEC-05: applications reach DynamoDB through a VPC gateway endpoint (no
# traffic over the internet, no NAT cost), with no endpoint policy: access
# control stays in IAM (modules/dynamodb-access), where the escalation matrix
# checks it; an endpoint policy would be a second, unchecked place.

data "aws_region" "current" {}

data "aws_partition" "current" {}

locals {
  region = coalesce(var.region, data.aws_region.current.name)
  # com.amazonaws.REGION.dynamodb (the same name in every partition's
  # commercial form; cn- regions use cn.com.amazonaws).
  service_name = data.aws_partition.current.partition == "aws-cn" ? "cn.com.amazonaws.${local.region}.dynamodb" : "com.amazonaws.${local.region}.dynamodb"
  tags         = merge(var.tags, { env = var.env, "managed-by" = "terraform", Name = "${var.env}-dynamodb" })
}

resource "aws_vpc_endpoint" "dynamodb" {
  vpc_id            = var.vpc_id
  service_name      = local.service_name
  vpc_endpoint_type = "Gateway"
  route_table_ids   = var.route_table_ids
  # No policy: the endpoint allows what IAM allows (DDB-SEC-05).

  tags = local.tags
}
