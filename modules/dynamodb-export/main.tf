# The export bucket (DDB-EXP-01 analytics, DDB-DR-01 backup & restore):
# versioned, encrypted (SSE-KMS or SSE-S3), public access blocked, ACLs off,
# TLS only, lifecycle rules, and a policy that accepts object writes only
# under the named tables' prefixes. The optional schedule is in schedule.tf.

# Partition, region and account come from the tables' ARNs, so every ARN
# below (and so every policy) is known at plan time, with no API call.
locals {
  arn_parts   = split(":", var.tables[0].arn)
  partition   = local.arn_parts[1]
  region      = local.arn_parts[3]
  account_id  = local.arn_parts[4]
  table_names = [for t in var.tables : t.name]
  table_arns  = [for t in var.tables : t.arn]

  bucket_name = coalesce(var.bucket_name, "${var.env}-${var.product}-dynamodb-exports")
  bucket_arn  = "arn:${local.partition}:s3:::${local.bucket_name}"
  # Where each table's exports may be written.
  table_prefix_arns = [for t in local.table_names : "${local.bucket_arn}/${var.exports_prefix}/${t}/*"]

  exporter_arns = concat(var.exporter_principal_arns, var.schedule_enabled ? [local.scheduler_lambda_role_arn] : [])
  tags          = merge(var.tags, { env = var.env, product = var.product, "managed-by" = "terraform" })
  bucket_tags   = merge(local.tags, var.tls_only_disabled_reason == "" ? {} : { "dynops:exception:tls-only" = var.tls_only_disabled_reason })
}

resource "aws_s3_bucket" "this" {
  bucket        = local.bucket_name
  force_destroy = var.force_destroy
  tags          = local.bucket_tags
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id
  versioning_configuration {
    status = "Enabled"
  }
}

# Object Lock (opt-in): every object version is kept object_lock.days from its
# write. This resource enables Object Lock on the existing versioned bucket
# (provider docs: "for new and existing buckets"); aws_s3_bucket's own
# object_lock_enabled is not set, since changing it replaces the bucket.
resource "aws_s3_bucket_object_lock_configuration" "this" {
  count = var.object_lock == null ? 0 : 1

  bucket              = aws_s3_bucket.this.id
  object_lock_enabled = "Enabled"

  rule {
    default_retention {
      mode = var.object_lock.mode
      days = var.object_lock.days
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    object_ownership = "BucketOwnerEnforced" # ACLs off: the bucket owner owns every export object
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = var.lifecycle_rules.abort_incomplete_multipart_upload_days
    }
  }

  rule {
    id     = "expire-noncurrent-versions"
    status = "Enabled"
    filter {}
    noncurrent_version_expiration {
      noncurrent_days = var.lifecycle_rules.noncurrent_version_expiration_days
    }
  }

  dynamic "rule" {
    for_each = var.lifecycle_rules.transition_to_standard_ia_days == null && var.lifecycle_rules.expiration_days == null ? [] : [1]
    content {
      id     = "exports-age-out"
      status = "Enabled"
      filter {
        prefix = "${var.exports_prefix}/"
      }
      dynamic "transition" {
        for_each = var.lifecycle_rules.transition_to_standard_ia_days == null ? [] : [var.lifecycle_rules.transition_to_standard_ia_days]
        content {
          days          = transition.value
          storage_class = "STANDARD_IA"
        }
      }
      dynamic "expiration" {
        for_each = var.lifecycle_rules.expiration_days == null ? [] : [var.lifecycle_rules.expiration_days]
        content {
          days = expiration.value
        }
      }
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

data "aws_iam_policy_document" "bucket" {
  dynamic "statement" {
    for_each = var.tls_only_disabled_reason == "" ? [1] : []
    content {
      sid     = "DenyInsecureTransport"
      effect  = "Deny"
      actions = ["s3:*"]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
      resources = [local.bucket_arn, "${local.bucket_arn}/*"]
      condition {
        test     = "Bool"
        variable = "aws:SecureTransport"
        values   = ["false"]
      }
    }
  }

  # DynamoDB writes an export with the credentials of whoever requested it;
  # no object may be written outside the named tables' prefixes, by anyone.
  statement {
    sid     = "DenyWritesOutsideNamedTables"
    effect  = "Deny"
    actions = ["s3:PutObject"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    not_resources = local.table_prefix_arns
  }

  dynamic "statement" {
    for_each = length(local.exporter_arns) > 0 ? [1] : []
    content {
      sid       = "AllowExportWritesOfNamedTables"
      effect    = "Allow"
      actions   = ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl"]
      resources = local.table_prefix_arns
      principals {
        type        = "AWS"
        identifiers = local.exporter_arns
      }
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = data.aws_iam_policy_document.bucket.json

  # The scheduler's role must exist before a policy can name it.
  depends_on = [aws_s3_bucket_public_access_block.this, aws_iam_role.scheduler_lambda]
}
