package dynops.plan

# What tfsec used to check, on the resources the modules create around the
# tables (docs/security.md maps each tfsec check to its rule here):
# DDB-SEC-07 S3 buckets, DDB-SEC-08 queues, topics and keys, DDB-SEC-06 the
# trail itself, DDB-MON-02 log groups.

# DDB-SEC-07: every S3 bucket (export, CloudTrail, any other) blocks public
# access, encrypts at rest and is versioned. A hardening resource covers a
# bucket in the same module instance when its bucket is that bucket's name, or
# a reference not known until apply.
buckets := of_type("aws_s3_bucket")

deny contains msg if {
	some b in buckets
	not public_access_blocked(b)
	msg := sprintf("DDB-SEC-07: %s: S3 bucket needs aws_s3_bucket_public_access_block with all four settings true", [b.address])
}

deny contains msg if {
	some b in buckets
	not encrypted(b)
	msg := sprintf("DDB-SEC-07: %s: S3 bucket needs aws_s3_bucket_server_side_encryption_configuration (SSE-S3 or SSE-KMS)", [b.address])
}

deny contains msg if {
	some b in buckets
	not versioned(b)
	msg := sprintf("DDB-SEC-07: %s: S3 bucket needs aws_s3_bucket_versioning with status Enabled (an overwritten or deleted export or trail log stays recoverable)", [b.address])
}

hardening(b, kind) := {h.change.after |
	some h in of_type(kind)
	object.get(h, "module_address", "") == object.get(b, "module_address", "")
	same_bucket(h, b)
}

same_bucket(h, b) if h.change.after.bucket == b.change.after.bucket

same_bucket(h, _) if h.change.after_unknown.bucket == true

public_access_blocked(b) if {
	some a in hardening(b, "aws_s3_bucket_public_access_block")
	a.block_public_acls == true
	a.block_public_policy == true
	a.ignore_public_acls == true
	a.restrict_public_buckets == true
}

encrypted(b) if {
	some a in hardening(b, "aws_s3_bucket_server_side_encryption_configuration")
	some rule in a.rule
	some d in rule.apply_server_side_encryption_by_default
	d.sse_algorithm in {"AES256", "aws:kms", "aws:kms:dsse"}
}

versioned(b) if {
	some a in hardening(b, "aws_s3_bucket_versioning")
	some c in a.versioning_configuration
	c.status == "Enabled"
}

# DDB-SEC-08: queues and topics encrypt at rest; KMS keys rotate.
# An SQS queue: SSE-SQS (sqs_managed_sse_enabled) or a KMS key.
deny contains msg if {
	some q in of_type("aws_sqs_queue")
	not queue_encrypted(q)
	msg := sprintf("DDB-SEC-08: %s: SQS queue is not encrypted at rest: set sqs_managed_sse_enabled = true or kms_master_key_id", [q.address])
}

queue_encrypted(q) if q.change.after.sqs_managed_sse_enabled == true

queue_encrypted(q) if key_set(q, "kms_master_key_id")

# An SNS topic: a KMS key (SNS has no service-managed encryption).
deny contains msg if {
	some t in of_type("aws_sns_topic")
	not key_set(t, "kms_master_key_id")
	msg := sprintf("DDB-SEC-08: %s: SNS topic is not encrypted at rest: set kms_master_key_id (modules/alarm-topic creates a key)", [t.address])
}

# A key attribute is set: a non-empty string, or a reference known at apply.
key_set(r, attr) if {
	v := object.get(r.change.after, attr, null)
	is_string(v)
	trim_space(v) != ""
}

key_set(r, attr) if object.get(r.change.after_unknown, attr, false) == true

# Symmetric encryption keys rotate (KMS rotates only those).
deny contains msg if {
	some k in of_type("aws_kms_key")
	symmetric(k)
	object.get(k.change.after, "enable_key_rotation", false) != true
	msg := sprintf("DDB-SEC-08: %s: KMS key does not rotate: set enable_key_rotation = true", [k.address])
}

symmetric(k) if object.get(k.change.after, "customer_master_key_spec", null) in {null, "SYMMETRIC_DEFAULT"}

# DDB-SEC-06: the trail's logs can be proven untouched, and it records every
# region (a DR region's tables too).
deny contains msg if {
	some t in trails
	object.get(t.change.after, "enable_log_file_validation", false) != true
	msg := sprintf("DDB-SEC-06: %s: CloudTrail log file validation is off: set enable_log_file_validation = true", [t.address])
}

deny contains msg if {
	some t in trails
	object.get(t.change.after, "is_multi_region_trail", false) != true
	msg := sprintf("DDB-SEC-06: %s: the trail records one region only: set is_multi_region_trail = true (modules/cloudtrail-data-events multi_region) so that a DR region's tables are recorded too", [t.address])
}

# DDB-MON-02: log groups expire (retention_in_days unset or 0 keeps logs, and
# their cost, forever).
deny contains msg if {
	some g in of_type("aws_cloudwatch_log_group")
	not expires(g)
	msg := sprintf("DDB-MON-02: %s: CloudWatch log group never expires: set retention_in_days (the modules default to 30)", [g.address])
}

expires(g) if {
	days := object.get(g.change.after, "retention_in_days", null)
	is_number(days)
	days > 0
}

expires(g) if object.get(g.change.after_unknown, "retention_in_days", false) == true
