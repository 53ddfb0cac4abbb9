package dynops.plan

# DDB-STREAM-04: a stream consumer's event source mapping bisects failing
# batches, bounds retries and record age, and sends failures to a DLQ.
# Stream mappings are the ones with a starting position (DynamoDB, Kinesis).
stream_mappings contains r if {
	some r in of_type("aws_lambda_event_source_mapping")
	r.change.after.starting_position != null
}

deny contains msg if {
	some r in stream_mappings
	some problem in esm_problems(r)
	msg := sprintf("DDB-STREAM-04: %s: %s", [r.address, problem])
}

esm_problems(r) := {p |
	some check, p in {
		"bisect": "bisect_batch_on_function_error must be true",
		"retries": "maximum_retry_attempts must be set and bounded (0..10000, not -1)",
		"age": "maximum_record_age_in_seconds must be set and bounded (60..604800, not -1)",
		"dlq": "an on-failure destination (the SQS DLQ) must be configured in destination_config",
	}
	not esm_ok(r, check)
}

esm_ok(r, "bisect") if r.change.after.bisect_batch_on_function_error == true

esm_ok(r, "retries") if {
	n := r.change.after.maximum_retry_attempts
	n >= 0
	n <= 10000
}

esm_ok(r, "age") if {
	n := r.change.after.maximum_record_age_in_seconds
	n >= 60
	n <= 604800
}

esm_ok(r, "dlq") if {
	some d in r.change.after.destination_config
	count(d.on_failure) > 0
}
