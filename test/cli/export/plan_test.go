package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const module = "modules/dynamodb-export"

var tables = []map[string]any{
	{"name": "dev-hoge-user", "arn": "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user"},
	{"name": "dev-hoge-order", "arn": "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-order"},
}

func vars(over map[string]any) map[string]any {
	v := map[string]any{"env": "dev", "product": "hoge", "tables": tables}
	for k, val := range over {
		v[k] = val
	}
	return v
}

// schedule returns the inputs that turn the schedule on, with a Lambda zip.
func schedule(t testing.TB) map[string]any {
	t.Helper()
	return map[string]any{"schedule_enabled": true, "scheduler_zip_path": harness.PlanZip(t),
		"alarm_actions": []string{"arn:aws:sns:eu-west-1:123456789012:dev-hoge-alerts"}, "contributor_insights_enabled": false}
}

// plans are the package's offline plans that must succeed, planned together
// in one terraform run (harness.PlanGroup); each test reads its own case.
var plans = harness.NewPlanGroup(
	harness.PlanCase{Name: "defaults", Dir: module, Vars: func(testing.TB) map[string]any { return vars(nil) }},
	harness.PlanCase{Name: "tls exception", Dir: module, Vars: func(testing.TB) map[string]any {
		return vars(map[string]any{"tls_only_disabled_reason": "local emulator speaks HTTP"})
	}},
	harness.PlanCase{Name: "kms and lifecycle", Dir: module, Vars: func(testing.TB) map[string]any {
		return vars(map[string]any{"kms_key_arn": exportKey,
			"lifecycle_rules": map[string]any{"transition_to_standard_ia_days": 30, "expiration_days": 400, "noncurrent_version_expiration_days": 7}})
	}},
	harness.PlanCase{Name: "exporters", Dir: module, Vars: func(testing.TB) map[string]any {
		return vars(map[string]any{"exporter_principal_arns": []string{oncallRole}})
	}},
	harness.PlanCase{Name: "schedule", Dir: module, Vars: func(t testing.TB) map[string]any { return vars(schedule(t)) }},
	harness.PlanCase{Name: "object lock", Dir: module, Vars: func(testing.TB) map[string]any {
		return vars(map[string]any{"object_lock": map[string]any{"days": 35}})
	}},
)

const (
	exportKey  = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555"
	oncallRole = "arn:aws:iam::123456789012:role/dev-oncall"
)

func attrs(t *testing.T, p *terraform.PlanStruct, addr string) map[string]any {
	t.Helper()
	rc, ok := p.ResourcePlannedValuesMap[addr]
	require.True(t, ok, "plan has no %s", addr)
	return rc.AttributeValues
}

func first(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	list, ok := m[key].([]any)
	require.True(t, ok && len(list) > 0, "no %s block in %v", key, m)
	return list[0].(map[string]any)
}

// policy is an IAM/bucket policy document.
type policy struct {
	Statement []struct {
		Sid         string
		Effect      string
		Action      any
		Resource    any
		NotResource any
		Principal   any
		Condition   map[string]map[string]any
	}
}

func parsePolicy(t *testing.T, doc any) policy {
	t.Helper()
	s, ok := doc.(string)
	require.True(t, ok, "policy is not known at plan time: %v", doc)
	var p policy
	require.NoError(t, json.Unmarshal([]byte(s), &p))
	return p
}

func list(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = e.(string)
		}
		return out
	}
	return nil
}

func TestPlanBucketHardening(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "defaults")

	assert.Equal(t, "dev-hoge-dynamodb-exports", attrs(t, p, "aws_s3_bucket.this")["bucket"])
	assert.Equal(t, false, attrs(t, p, "aws_s3_bucket.this")["force_destroy"])
	assert.Equal(t, "Enabled", first(t, attrs(t, p, "aws_s3_bucket_versioning.this"), "versioning_configuration")["status"])

	sse := first(t, first(t, attrs(t, p, "aws_s3_bucket_server_side_encryption_configuration.this"), "rule"), "apply_server_side_encryption_by_default")
	assert.Equal(t, "AES256", sse["sse_algorithm"], "SSE-S3 without a key")

	pab := attrs(t, p, "aws_s3_bucket_public_access_block.this")
	for _, k := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
		assert.Equal(t, true, pab[k], k)
	}
	assert.Equal(t, "BucketOwnerEnforced", first(t, attrs(t, p, "aws_s3_bucket_ownership_controls.this"), "rule")["object_ownership"])

	rules := attrs(t, p, "aws_s3_bucket_lifecycle_configuration.this")["rule"].([]any)
	require.Len(t, rules, 2, "abort-multipart and noncurrent-expiration by default")
	assert.EqualValues(t, 7, first(t, rules[0].(map[string]any), "abort_incomplete_multipart_upload")["days_after_initiation"])
	assert.EqualValues(t, 30, first(t, rules[1].(map[string]any), "noncurrent_version_expiration")["noncurrent_days"])

	for addr := range p.ResourcePlannedValuesMap {
		assert.False(t, strings.Contains(addr, "scheduler") || strings.Contains(addr, "checkpoint"), "no schedule by default: %s", addr)
	}
}

func TestPlanTLSOnlyException(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "tls exception")
	pol := parsePolicy(t, attrs(t, p, "aws_s3_bucket_policy.this")["policy"])
	for _, s := range pol.Statement {
		assert.NotEqual(t, "DenyInsecureTransport", s.Sid)
	}
	assert.Equal(t, "local emulator speaks HTTP", attrs(t, p, "aws_s3_bucket.this")["tags"].(map[string]any)["dynops:exception:tls-only"],
		"the exception is visible in the plan")
}

func TestPlanKMSAndLifecycleInputs(t *testing.T) {
	t.Parallel()
	key := exportKey
	p := plans.Plan(t, "kms and lifecycle")
	rule := first(t, attrs(t, p, "aws_s3_bucket_server_side_encryption_configuration.this"), "rule")
	sse := first(t, rule, "apply_server_side_encryption_by_default")
	assert.Equal(t, "aws:kms", sse["sse_algorithm"])
	assert.Equal(t, key, sse["kms_master_key_id"])
	assert.Equal(t, true, rule["bucket_key_enabled"])

	rules := attrs(t, p, "aws_s3_bucket_lifecycle_configuration.this")["rule"].([]any)
	require.Len(t, rules, 3)
	age := rules[2].(map[string]any)
	assert.Equal(t, "exports/", first(t, age, "filter")["prefix"])
	assert.EqualValues(t, 30, first(t, age, "transition")["days"])
	assert.Equal(t, "STANDARD_IA", first(t, age, "transition")["storage_class"])
	assert.EqualValues(t, 400, first(t, age, "expiration")["days"])
	assert.EqualValues(t, 7, first(t, rules[1].(map[string]any), "noncurrent_version_expiration")["noncurrent_days"])
}

func TestPlanBucketPolicy(t *testing.T) {
	t.Parallel()
	oncall := oncallRole
	p := plans.Plan(t, "exporters")
	pol := parsePolicy(t, attrs(t, p, "aws_s3_bucket_policy.this")["policy"])
	bySid := map[string]int{}
	for i, s := range pol.Statement {
		bySid[s.Sid] = i
	}
	prefixes := []string{"arn:aws:s3:::dev-hoge-dynamodb-exports/exports/dev-hoge-user/*", "arn:aws:s3:::dev-hoge-dynamodb-exports/exports/dev-hoge-order/*"}

	t.Run("TLS only", func(t *testing.T) {
		s := pol.Statement[bySid["DenyInsecureTransport"]]
		assert.Equal(t, "Deny", s.Effect)
		assert.Equal(t, []string{"s3:*"}, list(s.Action))
		assert.Equal(t, "false", list(s.Condition["Bool"]["aws:SecureTransport"])[0])
	})
	t.Run("writes only under the named tables' prefixes", func(t *testing.T) {
		s := pol.Statement[bySid["DenyWritesOutsideNamedTables"]]
		assert.Equal(t, "Deny", s.Effect)
		assert.Equal(t, []string{"s3:PutObject"}, list(s.Action))
		assert.ElementsMatch(t, prefixes, list(s.NotResource))
	})
	t.Run("DDB-SEC-01 exporters allowed on those prefixes only", func(t *testing.T) {
		s := pol.Statement[bySid["AllowExportWritesOfNamedTables"]]
		assert.Equal(t, "Allow", s.Effect)
		assert.ElementsMatch(t, []string{"s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl"}, list(s.Action))
		assert.ElementsMatch(t, prefixes, list(s.Resource))
		assert.Equal(t, []string{oncall}, list(s.Principal.(map[string]any)["AWS"]))
	})
}

func TestPlanSchedule(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "schedule")

	t.Run("one schedule per table invoking the Lambda with the table's prefix", func(t *testing.T) {
		for _, tbl := range []string{"dev-hoge-user", "dev-hoge-order"} {
			s := attrs(t, p, `aws_scheduler_schedule.table["`+tbl+`"]`)
			assert.Equal(t, "rate(15 minutes)", s["schedule_expression"])
			target := first(t, s, "target")
			var input map[string]string
			require.NoError(t, json.Unmarshal([]byte(target["input"].(string)), &input))
			assert.Equal(t, map[string]string{"table": tbl, "bucket": "dev-hoge-dynamodb-exports", "prefix": "exports/" + tbl}, input)
		}
		fn := attrs(t, p, "aws_lambda_function.scheduler[0]")
		assert.Equal(t, "provided.al2023", fn["runtime"])
		assert.EqualValues(t, 1, fn["reserved_concurrent_executions"], "steps never run concurrently")
		assert.Equal(t, "dev-hoge-export-checkpoint", first(t, fn, "environment")["variables"].(map[string]any)["CHECKPOINT_TABLE"])
	})
	t.Run("DDB-PITR-01 the checkpoint table follows the guideline", func(t *testing.T) {
		cp := attrs(t, p, "module.checkpoint_table[0].aws_dynamodb_table.this")
		assert.Equal(t, "dev-hoge-export-checkpoint", cp["name"])
		assert.Equal(t, "PAY_PER_REQUEST", cp["billing_mode"])
		assert.Equal(t, true, cp["deletion_protection_enabled"])
		assert.Equal(t, true, first(t, cp, "point_in_time_recovery")["enabled"])
	})
	t.Run("DDB-SEC-01 the Lambda's IAM is least privilege", func(t *testing.T) {
		pol := parsePolicy(t, attrs(t, p, "aws_iam_role_policy.scheduler_lambda[0]")["policy"])
		got := map[string][]string{}
		for _, s := range pol.Statement {
			if s.Sid == "DenyOutsideDocumentedSet" {
				assert.Equal(t, "Deny", s.Effect, "the role cannot grant itself more (DDB-SEC-01)")
				continue
			}
			assert.Equal(t, "Allow", s.Effect)
			for _, a := range list(s.Action) {
				assert.NotContains(t, a, "*", "no wildcard actions")
				got[a] = list(s.Resource)
			}
		}
		tableArns := []string{tables[0]["arn"].(string), tables[1]["arn"].(string)}
		assert.ElementsMatch(t, tableArns, got["dynamodb:ExportTableToPointInTime"], "exports of the named tables only")
		assert.ElementsMatch(t, []string{tableArns[0] + "/export/*", tableArns[1] + "/export/*"}, got["dynamodb:DescribeExport"])
		assert.Equal(t, []string{"arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-export-checkpoint"}, got["dynamodb:PutItem"])
		assert.ElementsMatch(t, []string{"arn:aws:s3:::dev-hoge-dynamodb-exports/exports/dev-hoge-user/*", "arn:aws:s3:::dev-hoge-dynamodb-exports/exports/dev-hoge-order/*"}, got["s3:PutObject"])
		assert.NotContains(t, got, "dynamodb:Scan", "an export reads PITR, never the table")
		for _, s := range pol.Statement {
			if s.Sid == "Metrics" {
				assert.Equal(t, "dynops/Export", list(s.Condition["StringEquals"]["cloudwatch:namespace"])[0], "metrics scoped to the namespace")
			}
		}
		inv := parsePolicy(t, attrs(t, p, "aws_iam_role_policy.scheduler[0]")["policy"])
		require.Len(t, inv.Statement, 2, "the invoke grant and the deny of everything else")
		assert.Equal(t, "DenyOutsideDocumentedSet", inv.Statement[1].Sid)
		assert.Equal(t, "Deny", inv.Statement[1].Effect)
		assert.Equal(t, []string{"lambda:InvokeFunction"}, list(inv.Statement[0].Action))
		assert.Equal(t, []string{"arn:aws:lambda:eu-west-1:123456789012:function:dev-hoge-export-scheduler"}, list(inv.Statement[0].Resource))
	})
	t.Run("the scheduler's role may write exports by bucket policy", func(t *testing.T) {
		pol := parsePolicy(t, attrs(t, p, "aws_s3_bucket_policy.this")["policy"])
		var found bool
		for _, s := range pol.Statement {
			if s.Sid == "AllowExportWritesOfNamedTables" {
				found = true
				assert.Contains(t, list(s.Principal.(map[string]any)["AWS"]), "arn:aws:iam::123456789012:role/dev-hoge-export-scheduler-lambda")
			}
		}
		assert.True(t, found)
	})
	t.Run("DDB-EXP-01 alarms: behind (missing data too), failed, gap, Lambda errors", func(t *testing.T) {
		lag := attrs(t, p, `aws_cloudwatch_metric_alarm.lag["dev-hoge-user"]`)
		assert.Equal(t, "LagSeconds", lag["metric_name"])
		assert.Equal(t, "dynops/Export", lag["namespace"])
		assert.EqualValues(t, 10800, lag["threshold"])
		assert.Equal(t, "breaching", lag["treat_missing_data"], "a stopped scheduler alarms")
		assert.Equal(t, []any{"arn:aws:sns:eu-west-1:123456789012:dev-hoge-alerts"}, lag["alarm_actions"])
		assert.Equal(t, "FailedExports", attrs(t, p, `aws_cloudwatch_metric_alarm.series_event["dev-hoge-order/failed"]`)["metric_name"])
		assert.Equal(t, "Gaps", attrs(t, p, `aws_cloudwatch_metric_alarm.series_event["dev-hoge-order/gap"]`)["metric_name"])
		assert.Equal(t, "Errors", attrs(t, p, "aws_cloudwatch_metric_alarm.scheduler_errors[0]")["metric_name"])
	})
}

// TestPlanObjectLock (issue 44): object_lock keeps every export version for
// its days in GOVERNANCE mode by default, enabled on the versioned bucket in
// place (the bucket resource itself is unchanged, so turning it on does not
// replace a bucket holding exports); off by default.
func TestPlanObjectLock(t *testing.T) {
	t.Parallel()
	_, off := plans.Plan(t, "defaults").ResourcePlannedValuesMap["aws_s3_bucket_object_lock_configuration.this[0]"]
	assert.False(t, off, "no Object Lock unless asked")

	p := plans.Plan(t, "object lock")
	lock := attrs(t, p, "aws_s3_bucket_object_lock_configuration.this[0]")
	assert.Equal(t, "Enabled", lock["object_lock_enabled"])
	retention := first(t, first(t, lock, "rule"), "default_retention")
	assert.Equal(t, "GOVERNANCE", retention["mode"], "governance by default")
	assert.EqualValues(t, 35, retention["days"])
	assert.Nil(t, retention["years"])
	assert.NotEqual(t, true, attrs(t, p, "aws_s3_bucket.this")["object_lock_enabled"], "the bucket is not replaced to turn it on")
}

func TestPlanValidations(t *testing.T) {
	t.Parallel()
	// Each case names its rule and wants the message and its fix, as the
	// diagnostic's own text: a message cut to its rule ID fails here.
	cases := []struct {
		name string
		over map[string]any
		want []string
	}{
		{"DDB-NAME-01 env not lower case", map[string]any{"env": "Dev"}, []string{"DDB-NAME-01: env must be lower case letters and digits", `(e.g. "dev")`}},
		{"DDB-NAME-01 product not lower case words", map[string]any{"product": "Hoge_App"}, []string{"DDB-NAME-01: product must be lower case words joined by '-'", `(e.g. "hoge")`}},
		{"DDB-NAME-01 table names follow the guideline", map[string]any{"tables": []map[string]any{{"name": "Users", "arn": "arn:aws:dynamodb:eu-west-1:123456789012:table/Users"}}}, []string{"DDB-NAME-01: tables must list at least one table", `each { name = "{env}-{product}-{usage}", arn = "arn:aws:dynamodb:REGION:ACCOUNT:table/<name>" }`}},
		{"DDB-NAME-01 the ARN names the table", map[string]any{"tables": []map[string]any{{"name": "dev-hoge-user", "arn": "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-other"}}}, []string{"DDB-NAME-01: tables must list at least one table", "table/<name>"}},
		{"DDB-NAME-01 no table", map[string]any{"tables": []map[string]any{}}, []string{"DDB-NAME-01: tables must list at least one table"}},
		{"DDB-EXP-01 bucket name not an S3 bucket name", map[string]any{"bucket_name": "Dev_Exports"}, []string{"DDB-EXP-01: bucket_name must be 3-63 lower case letters, digits, '.' or '-'", "(an S3 bucket name)"}},
		{"DDB-EXP-01 tables in one region", map[string]any{"tables": []map[string]any{tables[0], {"name": "dev-hoge-x", "arn": "arn:aws:dynamodb:us-east-1:123456789012:table/dev-hoge-x"}}}, []string{"DDB-EXP-01: tables must all be in one account and region", "(one export module per region)"}},
		{"DDB-EXP-01 exports prefix with a leading slash", map[string]any{"exports_prefix": "/exports"}, []string{"DDB-EXP-01: exports_prefix must be a key prefix without leading or trailing '/'", `(e.g. "exports")`}},
		{"DDB-EXP-01 STANDARD_IA needs 30 days", map[string]any{"lifecycle_rules": map[string]any{"transition_to_standard_ia_days": 10}}, []string{"DDB-EXP-01: lifecycle_rules: day counts must be at least 1", "transition_to_standard_ia_days at least 30 (an S3 rule for STANDARD_IA)"}},
		{"DDB-EXP-01 expiration under a day", map[string]any{"lifecycle_rules": map[string]any{"expiration_days": 0}}, []string{"DDB-EXP-01: lifecycle_rules: day counts must be at least 1"}},
		{"DDB-EXP-01 schedule needs the Lambda zip", map[string]any{"schedule_enabled": true}, []string{"DDB-EXP-01: schedule_enabled needs scheduler_zip_path", "run `make export-scheduler-zip` and pass bin/export-scheduler.zip"}},
		{"DDB-MON-01 schedule needs alarm actions", map[string]any{"schedule_enabled": true, "scheduler_zip_path": "bin/export-scheduler.zip"}, []string{"DDB-MON-01: a scheduled export needs alarm_actions", "must notify someone", "modules/alarm-topic"}},
		{"DDB-EXP-01 schedule expression", map[string]any{"schedule_expression": "every 15 minutes"}, []string{"DDB-EXP-01: schedule_expression must be rate(...) or cron(...)", `e.g. "rate(15 minutes)"`}},
		{"DDB-EXP-01 lag alarm not below a healthy lag", map[string]any{"lag_alarm_seconds": 600}, []string{"DDB-EXP-01: lag_alarm_seconds must be at least 1800", "a healthy series runs up to a 15-minute window"}},
		{"DDB-SEC-04 KMS key must be an ARN", map[string]any{"kms_key_arn": "alias/mine"}, []string{"DDB-SEC-04: kms_key_arn must be a KMS key ARN", "or null for SSE-S3"}},
		{"DDB-EXP-01 object lock of no days", map[string]any{"object_lock": map[string]any{"days": 0}}, []string{"DDB-EXP-01: object_lock.days must be a whole number of days from 1 to 36500", "(S3 Object Lock's default retention)"}},
		{"DDB-EXP-01 object lock mode", map[string]any{"object_lock": map[string]any{"days": 7, "mode": "LEGAL_HOLD"}}, []string{"DDB-EXP-01: object_lock.mode must be GOVERNANCE", "or COMPLIANCE"}},
		{"DDB-SEC-01 no wildcard exporters", map[string]any{"exporter_principal_arns": []string{"*"}}, []string{"DDB-SEC-01: exporter_principal_arns must be IAM ARNs", "not wildcards"}},
	}
	refusals := make([]harness.Refusal, 0, len(cases))
	for _, c := range cases {
		refusals = append(refusals, harness.Refusal{Name: c.name, Vars: vars(c.over), Want: c.want})
	}
	harness.ExpectRefusals(t, module, refusals)
}
