provider "aws" {
  region = "eu-west-1"
}

# A multi-tenant table with composite keys: the partition key carries the
# tenant (`TENANT#<tenant_id>`), so IAM can isolate tenants item by item with
# dynamodb:LeadingKeys (DDB-SEC-02), and gsi1 keeps the tenant in its
# partition key too so index queries stay isolated.
module "table" {
  source = "../.."

  env     = var.env
  product = var.product
  usage   = "order"

  hash_key  = "tenant_key" # TENANT#<tenant_id>
  range_key = "order_key"  # ORDER#<order_id>
  attributes = [
    { name = "tenant_key", type = "S" },
    { name = "order_key", type = "S" },
    { name = "tenant_status", type = "S" }, # TENANT#<tenant_id>#STATUS#<status>
    { name = "created_at", type = "N" },
  ]

  global_secondary_indexes = [
    { name = "gsi1", hash_key = "tenant_status", range_key = "created_at", non_key_attributes = ["total", "currency"] },
    { name = "gsi2", hash_key = "tenant_key", range_key = "created_at", projection_type = "KEYS_ONLY" },
  ]

  deletion_protection_enabled         = var.deletion_protection_enabled
  deletion_protection_disabled_reason = var.deletion_protection_disabled_reason
  contributor_insights_enabled        = var.contributor_insights_enabled

  tags = { owner = "platform-team", tenancy = "multi" }
}
