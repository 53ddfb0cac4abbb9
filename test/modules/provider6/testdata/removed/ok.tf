# Arguments both majors accept: no findings.
resource "aws_eip" "ok" {
  domain = "vpc"
}

data "aws_region" "current" {}
