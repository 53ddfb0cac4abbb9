package dynops.plan

# DDB-EXP-01: S3 buckets in a DynamoDB plan (the export destinations) block
# public access and encrypt at rest. A hardening resource covers a bucket in
# the same module instance when its bucket is that bucket's name, or a
# reference not known until apply.
buckets := of_type("aws_s3_bucket")

deny contains msg if {
	some b in buckets
	not public_access_blocked(b)
	msg := sprintf("DDB-EXP-01: %s: export bucket needs aws_s3_bucket_public_access_block with all four settings true", [b.address])
}

deny contains msg if {
	some b in buckets
	not encrypted(b)
	msg := sprintf("DDB-EXP-01: %s: export bucket needs aws_s3_bucket_server_side_encryption_configuration (SSE-S3 or SSE-KMS)", [b.address])
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

# DDB-EXP-02: exports are DynamoDB JSON; Parquet / Iceberg conversion is a
# downstream step (ION is refused).
deny contains msg if {
	some e in of_type("aws_dynamodb_table_export")
	object.get(e.change.after, "export_format", "DYNAMODB_JSON") != "DYNAMODB_JSON"
	msg := sprintf("DDB-EXP-02: %s: export_format %q; exports are DYNAMODB_JSON and conversion to Parquet or Iceberg happens downstream (docs/guideline.md#ddb-exp-02)", [e.address, e.change.after.export_format])
}
