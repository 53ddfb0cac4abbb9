provider "aws" {
  region = var.region
}

# A VPC with one private route table, and the DynamoDB gateway endpoint on it
# (DDB-SEC-05). In an env root, pass the application VPC's IDs instead.
resource "aws_vpc" "this" {
  cidr_block = "10.20.0.0/16"
  tags       = { Name = "${var.env}-example" }
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id
  tags   = { Name = "${var.env}-example-private" }
}

module "dynamodb_endpoint" {
  source = "../.."

  env             = var.env
  vpc_id          = aws_vpc.this.id
  route_table_ids = [aws_route_table.private.id]
}
