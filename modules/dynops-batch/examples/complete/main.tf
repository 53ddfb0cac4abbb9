provider "aws" {
  region = var.region
}

# The Batch side of a sharded diff and repair of prod-hoge-user (docs/batch.md):
# the shards read the table and its exports, exchange through the run bucket,
# and may repair the same table with conditional writes.
module "dynops_batch" {
  source = "../.."

  permissions_boundary_arn = var.permissions_boundary_arn

  name               = "${var.env}-${var.product}-dynops-batch"
  subnet_ids         = var.subnet_ids
  security_group_ids = var.security_group_ids
  max_vcpus          = 64
  image              = "${var.account_id}.dkr.ecr.${var.region}.amazonaws.com/dynops:v2.4.0"

  worker = {
    vcpu                  = 2
    memory_mib            = 8192
    ephemeral_storage_gib = 50
  }

  source_table_arns       = ["arn:aws:dynamodb:${var.region}:${var.account_id}:table/${var.env}-${var.product}-user"]
  write_target_table_arns = ["arn:aws:dynamodb:${var.region}:${var.account_id}:table/${var.env}-${var.product}-user"]
  export_locations        = [{ bucket = "${var.env}-${var.product}-dynamodb-exports", prefix = "exports/${var.env}-${var.product}-user" }]
  run_location            = { bucket = "${var.env}-${var.product}-dynops-runs", prefix = "diff" }

  # The same role for examples/kubernetes/dynops-diff-job.yaml (IRSA).
  kubernetes_service_account = {
    oidc_provider_arn = "arn:aws:iam::${var.account_id}:oidc-provider/oidc.eks.${var.region}.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
    namespace         = "dynops"
    name              = "dynops-diff"
  }

  tags = { Environment = var.env }
}
