# DDB-SEC-06: CloudTrail records DynamoDB's control-plane (management events)
# and data-plane calls (data events on every table and stream), unfiltered:
# filtering happens downstream (EventBridge, Athena), never by not logging.
# The trail writes to its own bucket: encrypted, versioned, public access
# blocked, TLS only, written only by this trail.

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  partition   = data.aws_partition.current.partition
  region      = data.aws_region.current.name
  trail_name  = "${var.env}-dynamodb-data-events"
  trail_arn   = "arn:${local.partition}:cloudtrail:${local.region}:${var.account_id}:trail/${local.trail_name}"
  bucket_name = coalesce(var.bucket_name, "${var.env}-${var.account_id}-cloudtrail")
  bucket_arn  = "arn:${local.partition}:s3:::${local.bucket_name}"
  tags        = merge(var.tags, { env = var.env, "managed-by" = "terraform" })
}

resource "aws_s3_bucket" "trail" {
  bucket        = local.bucket_name
  force_destroy = var.force_destroy
  tags          = local.tags
}

resource "aws_s3_bucket_public_access_block" "trail" {
  bucket = aws_s3_bucket.trail.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "trail" {
  bucket = aws_s3_bucket.trail.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "trail" {
  bucket = aws_s3_bucket.trail.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "trail" {
  bucket = aws_s3_bucket.trail.id
  rule {
    id     = "expire"
    status = "Enabled"
    filter {}
    expiration {
      days = var.retention_days
    }
    noncurrent_version_expiration {
      noncurrent_days = 30
    }
  }
}

# CloudTrail writes only for this trail of this account (confused deputy).
data "aws_iam_policy_document" "bucket" {
  statement {
    sid       = "CloudTrailAclCheck"
    actions   = ["s3:GetBucketAcl"]
    resources = [local.bucket_arn]
    principals {
      type        = "Service"
      identifiers = ["cloudtrail.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceArn"
      values   = [local.trail_arn]
    }
  }
  statement {
    sid       = "CloudTrailWrite"
    actions   = ["s3:PutObject"]
    resources = ["${local.bucket_arn}/AWSLogs/${var.account_id}/*"]
    principals {
      type        = "Service"
      identifiers = ["cloudtrail.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "s3:x-amz-acl"
      values   = ["bucket-owner-full-control"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceArn"
      values   = [local.trail_arn]
    }
  }
  statement {
    sid       = "TLSOnly"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [local.bucket_arn, "${local.bucket_arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "trail" {
  bucket = aws_s3_bucket.trail.id
  policy = data.aws_iam_policy_document.bucket.json

  depends_on = [aws_s3_bucket_public_access_block.trail]
}

resource "aws_cloudtrail" "this" {
  name                          = local.trail_name
  s3_bucket_name                = aws_s3_bucket.trail.id
  include_global_service_events = true
  is_multi_region_trail         = var.multi_region
  enable_log_file_validation    = true
  kms_key_id                    = var.kms_key_arn

  # Management events (control plane: CreateTable, UpdateTable, ...), read and write.
  advanced_event_selector {
    name = "Management events"
    field_selector {
      field  = "eventCategory"
      equals = ["Management"]
    }
  }

  # Data events (GetItem, PutItem, Query, GetRecords, ...) on every table and
  # stream, read and write: no filter but the resource type (DDB-SEC-06).
  dynamic "advanced_event_selector" {
    for_each = ["AWS::DynamoDB::Table", "AWS::DynamoDB::Stream"]
    content {
      name = "DynamoDB data events (${advanced_event_selector.value})"
      field_selector {
        field  = "eventCategory"
        equals = ["Data"]
      }
      field_selector {
        field  = "resources.type"
        equals = [advanced_event_selector.value]
      }
    }
  }

  tags = local.tags

  depends_on = [aws_s3_bucket_policy.trail]
}
