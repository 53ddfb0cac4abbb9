# Arguments hashicorp/aws 6.0 removed (version-6 upgrade guide) or whose kind
# differs: the checker must refuse each of them.
resource "aws_eip" "removed" {
  vpc = true # removed in 6.0: use domain = "vpc"
}

resource "aws_instance" "removed" {
  ami            = "ami-12345678"
  cpu_core_count = 2 # removed in 6.0: cpu_options { core_count = 2 }
}

resource "aws_dynamodb_table" "kinds" {
  name          = "fixture-kinds"
  hash_key      = "pk"
  billing_mode  = "PAY_PER_REQUEST"
  read_capacity = "five" # a number in 6.x

  attribute {
    name = "pk"
    type = "S"
  }

  ttl = { enabled = true } # a block in 6.x

  point_in_time_recovery {
    enabled     = true
    not_a_field = 1 # no such nested argument
  }

  dynamic "replica" {
    for_each = []
    content {
      region_name = replica.value
      made_up     = true # no such nested argument inside a dynamic block
    }
  }

  lifecycle {
    ignore_changes = [tags]
  }
}

resource "null_resource" "ignored" {
  anything = true
}
