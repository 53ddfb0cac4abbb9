# A deliberately bad environment: what the policies exist for. It bypasses
# modules/dynamodb-table (whose validations would refuse it at plan time)
# with raw resources, and `make policy` must deny it with three rule IDs:
#   DDB-PITR-01  PITR off without a reason
#   DDB-NAME-02  a GSI named after its key (user_id-index)
#   DDB-SEC-01   dynamodb:* on * (and DDB-SEC-03: not scoped to an env)
# Never applied; the policy tests plan it offline.
provider "aws" {
  region = "eu-west-1"
}

resource "aws_dynamodb_table" "user" {
  name         = "dev-hoge-user"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "tenant_id"
  range_key    = "user_id"

  deletion_protection_enabled = true
  stream_enabled              = true
  stream_view_type            = "NEW_AND_OLD_IMAGES"

  attribute {
    name = "tenant_id"
    type = "S"
  }

  attribute {
    name = "user_id"
    type = "S"
  }

  global_secondary_index {
    name               = "user_id-index"
    hash_key           = "user_id"
    projection_type    = "INCLUDE"
    non_key_attributes = ["email"]
  }

  point_in_time_recovery {
    enabled = false
  }
}

resource "aws_iam_policy" "app" {
  name = "dev-hoge-app"
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Sid = "Everything", Effect = "Allow", Action = "dynamodb:*", Resource = "*" }]
  })
}
