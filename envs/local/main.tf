# The local environment: the hoge tables on the local emulator (moto_server),
# started by `make demo` or the tests. Features the emulator cannot apply
# (global-table replicas, Contributor Insights) are switched off here only.
#
# The emulator's URL comes from the environment, AWS_ENDPOINT_URL (`make plan
# ENV=local` and `make demo` set it), not from an endpoints {} block: the
# provider spends about 4.5 CPU-s validating such a block at every plan and
# apply. Its static test credentials keep this root off any real account.
provider "aws" {
  region = var.region

  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true
  # Few retries: unsupported calls fail in seconds instead of minutes of
  # retried 500s, while a dropped connection is still retried.
  max_retries = 3
}

locals {
  # moto's account: every emulator answers with it.
  emulator_account_id = "123456789012"
}

module "stack" {
  source = "../../modules/dynamodb-stack"

  permissions_boundary_arn = var.permissions_boundary_arn

  env     = "local"
  product = "hoge"
  tables  = yamldecode(file("${path.module}/../tables.yaml"))

  # The emulator's account (the alarm topic's key policy names it, DDB-SEC-04).
  account_id = local.emulator_account_id

  # Stream consumers (DDB-STREAM-04) when the zip is given: `make consumer-zip`.
  stream_consumer = var.consumer_zip == null ? null : { filename = var.consumer_zip }

  # replica_regions: not here, moto has no global tables (envs/local/dr.tf stands them in).
  contributor_insights_enabled = false # moto: 500 Not Implemented

  export_enabled                  = true # the export bucket; no schedule (moto cannot run the Lambda)
  export_force_destroy            = true
  export_tls_only_disabled_reason = "local emulator: plain HTTP on loopback, and moto enforces the TLS-only deny"
}
