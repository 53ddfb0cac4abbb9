package dynops.plan

# DDB-EXP-02: exports are DynamoDB JSON; Parquet / Iceberg conversion is a
# downstream step (ION is refused).
deny contains msg if {
	some e in of_type("aws_dynamodb_table_export")
	object.get(e.change.after, "export_format", "DYNAMODB_JSON") != "DYNAMODB_JSON"
	msg := sprintf("DDB-EXP-02: %s: export_format %q; exports are DYNAMODB_JSON and conversion to Parquet or Iceberg happens downstream (docs/guideline.md#ddb-exp-02)", [e.address, e.change.after.export_format])
}
