provider "aws" {
  region = "eu-west-1"
}

# A global table (DDB-DR-01 pattern 4): replicas in two more regions, each
# with PITR on. The stream (NEW_AND_OLD_IMAGES) is what replication uses.
# The local emulator cannot create replicas: this example applies only on AWS.
module "table" {
  source = "../.."

  env     = var.env
  product = var.product
  usage   = "session"

  hash_key = "session_id"
  attributes = [
    { name = "session_id", type = "S" },
  ]

  replicas = [
    { region = "eu-central-1" },
    { region = "us-west-2" },
  ]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled
}
