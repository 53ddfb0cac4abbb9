package access

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/iamsim"
)

// escalationRole is one role of the escalation matrix: the identity policies
// the plan gives it, and its documented set, which comes from where the role
// is documented (internal/permissions, the module READMEs), not from the plan.
type escalationRole struct {
	name       string
	policies   []any
	documented []string
	// boundary is the role's permissions boundary, if the matrix gives it one.
	boundary any
	// postureOnly roles are asked the posture actions on the env's resources
	// only (roles of other modules' scopes: the CI test role's own resources
	// are TestCITestRoleCannotMakeItselfAdmin_DDB_SEC_01's).
	postureOnly bool
	// serviceOnly roles are assumed only by an AWS service that runs no code
	// of the account's (AWS Backup): a table policy cannot make the service
	// call more than it does, so their table cells are asked alone.
	serviceOnly bool
	// role is the plan case and address of its aws_iam_role ("" when the
	// matrix has no trust for it): what sts:AssumeRole of it is asked against.
	planCase, roleAddr string
}

// permissive is the most permissive resource policy a role could write on a
// table (PutResourcePolicy): everything to everyone. Same account, so on its
// own it would allow any action on the table: without the roles' caps the
// evaluator allows e.g. DeleteTable to a role whose policy allows only GetItem.
var permissive = map[string]any{
	"Version": "2012-10-17",
	"Statement": []any{map[string]any{
		"Sid": "EverythingToEveryone", "Effect": "Allow", "Principal": map[string]any{"AWS": "*"}, "Action": "*", "Resource": "*",
	}},
}

// escalationProbes are actions outside DynamoDB through which a role could
// widen its own rights (IAM, trust, resource policies of other services) or
// that the roles use; each is asked with the identity policy alone.
var escalationProbes = []string{
	"iam:PutRolePolicy", "iam:AttachRolePolicy", "iam:CreatePolicyVersion", "iam:UpdateAssumeRolePolicy", "iam:PassRole",
	"iam:DeleteRolePermissionsBoundary", "sts:AssumeRole",
	"s3:PutBucketPolicy", "s3:DeleteBucketPolicy", "s3:PutObject", "s3:GetObject",
	"sqs:SetQueueAttributes", "sqs:SendMessage", "kms:PutKeyPolicy", "kms:CreateGrant", "kms:Decrypt",
	"lambda:AddPermission", "lambda:UpdateFunctionCode", "lambda:InvokeFunction",
	"ssm:PutParameter", "ssm:DeleteParameter", "route53:UpdateHealthCheck", "route53:DeleteHealthCheck",
	"cloudwatch:PutMetricData", "cloudwatch:DeleteAlarms", "logs:PutLogEvents", "logs:DeleteLogGroup",
	"backup:DeleteRecoveryPoint", "backup:DeleteBackupVaultAccessPolicy",
	// Posture of the other services: policies, code, attributes, deletion.
	"iam:CreateRole", "iam:CreatePolicy", "iam:DetachRolePolicy", "iam:DeleteRolePolicy", "iam:PutRolePermissionsBoundary", "iam:CreateUser", "iam:CreateAccessKey",
	"s3:PutBucketAcl", "s3:PutObjectAcl", "s3:PutLifecycleConfiguration", "s3:PutBucketVersioning", "s3:DeleteBucket", "s3:DeleteObject",
	"sqs:AddPermission", "sqs:DeleteQueue", "sqs:PurgeQueue",
	"kms:ScheduleKeyDeletion", "kms:DisableKey", "kms:RevokeGrant",
	"lambda:UpdateFunctionConfiguration", "lambda:DeleteFunction", "lambda:PutFunctionConcurrency", "lambda:DeleteEventSourceMapping", "lambda:UpdateEventSourceMapping",
	"ssm:LabelParameterVersion", "route53:ChangeResourceRecordSets",
	"cloudwatch:DisableAlarmActions", "cloudwatch:PutMetricAlarm", "logs:PutRetentionPolicy", "logs:DeleteLogStream",
	"backup:DeleteBackupVault", "backup:PutBackupVaultAccessPolicy", "backup:UpdateRecoveryPointLifecycle", "backup:DeleteBackupPlan", "backup:DeleteBackupVaultLockConfiguration",
}

// posture are the actions of the per-role "can / cannot" section of
// docs/iam-roles.md: the ones that change a resource's protection, its
// policies, its code or its data wholesale (not item reads and writes).
var posture = []string{
	"dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "dynamodb:UpdateTable", "dynamodb:UpdateContinuousBackups",
	"dynamodb:UpdateTimeToLive", "dynamodb:DeleteTable", "dynamodb:DeleteBackup", "dynamodb:TagResource", "dynamodb:UntagResource",
	"dynamodb:DisableKinesisStreamingDestination", "dynamodb:UpdateKinesisStreamingDestination", "dynamodb:RestoreTableToPointInTime",
	"dynamodb:ExportTableToPointInTime", "dynamodb:Scan", "dynamodb:PartiQLDelete",
	"iam:PutRolePolicy", "iam:AttachRolePolicy", "iam:CreatePolicyVersion", "iam:UpdateAssumeRolePolicy", "iam:PassRole", "iam:CreateRole", "iam:DeleteRolePermissionsBoundary", "iam:CreateAccessKey",
	"s3:PutBucketPolicy", "s3:DeleteBucketPolicy", "s3:PutBucketAcl", "s3:PutObjectAcl", "s3:PutLifecycleConfiguration", "s3:DeleteBucket", "s3:DeleteObject",
	"kms:PutKeyPolicy", "kms:CreateGrant", "kms:ScheduleKeyDeletion", "kms:DisableKey",
	"lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration", "lambda:AddPermission", "lambda:DeleteFunction", "lambda:UpdateEventSourceMapping",
	"sqs:SetQueueAttributes", "sqs:AddPermission", "sqs:PurgeQueue", "sqs:DeleteQueue",
	"ssm:PutParameter", "ssm:DeleteParameter", "route53:UpdateHealthCheck", "route53:DeleteHealthCheck", "route53:ChangeResourceRecordSets",
	"cloudwatch:DeleteAlarms", "cloudwatch:DisableAlarmActions", "logs:DeleteLogGroup", "logs:PutRetentionPolicy",
	"backup:DeleteRecoveryPoint", "backup:DeleteBackupVault", "backup:PutBackupVaultAccessPolicy", "backup:DeleteBackupVaultAccessPolicy", "backup:UpdateRecoveryPointLifecycle", "backup:DeleteBackupVaultLockConfiguration",
}

// catalogue returns every action of services with one resource ARN each, from
// the IAM action catalogue bundled with the evaluator.
func catalogue(t *testing.T, services []string) map[string]string {
	t.Helper()
	in, err := json.Marshal(map[string]any{"services": services, "values": map[string]string{
		"Partition": "aws", "Region": region, "Account": accountID, "TableName": "dev-example-order", "StreamLabel": "2026-01-01T00:00:00.000",
		"BucketName": "dev-example-exports", "QueueName": "dev-example-dlq", "FunctionName": "dev-example-export-scheduler",
		"ParameterNameWithoutLeadingSlash": "dynops/dr/dev-example-session/active-region", "Id": healthCheckID,
		"LogGroupName": "/aws/lambda/dev-example-consumer", "AlarmName": "dev-example-alarm", "BackupVaultName": "dev-dynamodb",
		"RoleNameWithPath": "dev-example-dynamodb-dynops-operator", "PolicyNameWithPath": "dev-boundary", "KeyId": "1234abcd-12ab-34cd-56ef-1234567890ab",
	}})
	require.NoError(t, err)
	out := iamsim.Node(t, "actions.cjs", in)
	var list []struct{ Action, Resource string }
	require.NoError(t, json.Unmarshal(out, &list))
	m := map[string]string{}
	for _, a := range list {
		m[a.Action] = a.Resource
	}
	require.Greater(t, len(m), 70, "the catalogue lists too few actions")
	return m
}

// Keys and streams of the escalation matrix's plans.
var (
	matrixKMSKey = "arn:aws:kms:" + region + ":" + accountID + ":key/1234abcd-12ab-34cd-56ef-1234567890ab"
	matrixStream = fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/dev-example-order/stream/2026-01-01T00:00:00.000", region, accountID)
)

// exampleBoundary is the permissions boundary of the "example with boundary" case.
var exampleBoundary = "arn:aws:iam::" + accountID + ":policy/dev-boundary"

// plans are the package's offline plans, planned together in one terraform
// run (harness.PlanGroup); each test reads its own case. The output of the
// plans is not logged: the matrices are the output.
var plans = func() *harness.PlanGroup {
	g := harness.NewPlanGroup(append([]harness.PlanCase{
		{Name: "example", Dir: example, Vars: func(testing.TB) map[string]any {
			return map[string]any{"fis_experiment_template_ids": []string{fisTemplateID}}
		}},
		{Name: "example with boundary", Dir: example, Vars: func(testing.TB) map[string]any {
			return map[string]any{"permissions_boundary_arn": exampleBoundary, "health_check_ids": []string{healthCheckID}, "fis_experiment_template_ids": []string{fisTemplateID}}
		}},
		{Name: "example with audit log group", Dir: example, Vars: func(testing.TB) map[string]any {
			return map[string]any{"audit_log_group": map[string]any{"kms_key_arn": "arn:aws:kms:" + region + ":" + accountID + ":key/11111111-2222-3333-4444-555555555555"}}
		}},
		{Name: "dr example", Dir: "modules/dr/examples/two-region", Vars: func(testing.TB) map[string]any {
			return map[string]any{"account_id": accountID, "route53_enabled": false, "fis_pause_replication_enabled": true}
		}},
	}, append(moduleCases, indexKeyPlanCases()...)...)...)
	g.Quiet = true
	return g
}()

// moduleCases are the plans of module roots (no provider block of their own).
var moduleCases = []harness.PlanCase{
	{Name: "stream consumer", Dir: "modules/stream-consumer", Vars: func(t testing.TB) map[string]any {
		return map[string]any{
			"name": "dev-example-order-consumer", "stream_arn": matrixStream, "filename": harness.PlanZip(t),
			"alarm_sns_topic_arn": "arn:aws:sns:" + region + ":" + accountID + ":dev-example-alarms", "dlq_kms_master_key_id": matrixKMSKey,
			"handler_policy_statements": []map[string]any{{"sid": "RecordProcessedEvents", "actions": []string{"dynamodb:PutItem"}, "resources": []string{tableARN("dev", "processed")}}},
		}
	}},
	{Name: "export", Dir: "modules/dynamodb-export", Vars: func(t testing.TB) map[string]any {
		return map[string]any{
			"env": "dev", "product": "example", "kms_key_arn": matrixKMSKey,
			"tables":           []map[string]any{{"name": "dev-example-order", "arn": tableARN("dev", "order")}},
			"schedule_enabled": true, "scheduler_zip_path": harness.PlanZip(t), "alarm_actions": []string{"arn:aws:sns:" + region + ":" + accountID + ":dev-example-alerts"},
		}
	}},
	{Name: "dynops batch", Dir: "modules/dynops-batch", Vars: func(testing.TB) map[string]any {
		return map[string]any{
			"name": "dev-example-dynops-batch", "subnet_ids": []string{"subnet-0123456789abcdef0"}, "security_group_ids": []string{"sg-0123456789abcdef0"},
			"image":             accountID + ".dkr.ecr." + region + ".amazonaws.com/dynops:v2.4.0",
			"source_table_arns": []string{tableARN("dev", "order")}, "write_target_table_arns": []string{tableARN("dev", "order")},
			"export_locations": []map[string]any{{"bucket": "dev-example-exports", "prefix": "exports/dev-example-order"}},
			"run_location":     map[string]any{"bucket": "dev-example-exports", "prefix": "dynops-runs"},
		}
	}},
	{Name: "ci test role", Dir: "modules/ci-test-role", Vars: func(testing.TB) map[string]any {
		return map[string]any{"github_repository": "hoge-inc/dynops", "account_id": accountID}
	}},
	{Name: "tenant tables", Dir: module, Vars: func(testing.TB) map[string]any {
		return map[string]any{"env": "dev", "product": "example", "account_id": accountID, "tenant_tables": tenantTables()}
	}},
}

// planCasePolicies returns the identity policies planned in a case of plans.
func planCasePolicies(t *testing.T, name string) map[string]string {
	t.Helper()
	return policiesIn(t, plans.Plan(t, name))
}

// policiesIn returns the identity policy JSON of every aws_iam_role_policy /
// aws_iam_policy planned in p, by address.
func policiesIn(t *testing.T, p *terraform.PlanStruct) map[string]string {
	t.Helper()
	out := map[string]string{}
	for addr, r := range p.ResourcePlannedValuesMap {
		if r.Type != "aws_iam_role_policy" && r.Type != "aws_iam_policy" {
			continue
		}
		doc, ok := r.AttributeValues["policy"].(string)
		require.True(t, ok, "%s: the policy is not known at plan time", addr)
		out[addr] = doc
	}
	return out
}

func policyOf(t *testing.T, docs map[string]string, addr string) any {
	t.Helper()
	doc, ok := docs[addr]
	require.True(t, ok, "no policy %s in the plan (have %v)", addr, keys(docs))
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v))
	return v
}

// commandActions returns the union of the actions of the named dynops
// commands (internal/permissions), without the break-glass ones unless asked.
func commandActions(paths []string, breakGlass bool) []string {
	var out []string
	for _, c := range permissions.Commands() {
		if len(paths) > 0 && !slices.Contains(paths, c.Path) {
			continue
		}
		for _, a := range c.Actions {
			if breakGlass || permissions.RoleFor(a) == permissions.OperatorRole {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestEscalationMatrix_DDB_SEC_01: for every role the modules create, the
// real IAM evaluator combines the role's planned identity policies with the
// most permissive resource policy anyone (the operator, the failover role)
// could write on a table, and asks every DynamoDB action plus the actions
// through which a role could widen its rights elsewhere. A role reaches an
// action only if it is in its documented set; everything else is denied,
// explicitly where the role's own Deny NotAction caps it.
func TestEscalationMatrix_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	// One plan per module that creates roles (in turn: the machine is shared).
	access := planCasePolicies(t, "example")
	dr := planCasePolicies(t, "dr example")
	consumer := planCasePolicies(t, "stream consumer")
	export := planCasePolicies(t, "export")
	ci := planCasePolicies(t, "ci test role")
	batch := planCasePolicies(t, "dynops batch")

	item := []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
	drCommands := []string{"dr status", "dr failover", "dr failback", "dr drill"}
	roles := []escalationRole{
		// modules/dynamodb-access README: what each role may do.
		{name: "application", documented: append(slices.Clone(item), "dynamodb:DescribeTable")},
		{name: "tenant", documented: item},
		{name: "investigator", documented: []string{"dynamodb:GetItem", "dynamodb:Query"}},
		{name: "data-patch", documented: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"}},
		// internal/permissions: every dynops command; the protection switches only with break-glass.
		{name: "dynops-operator", documented: commandActions(nil, false)},
		{name: "dynops-break-glass", documented: commandActions(nil, true)},
		// modules/dr: what `dynops dr` calls (no Route 53 in this plan); the pause
		// drill (FIS, its alarm) runs as the operator, not the failover role;
		// failover --pause-template lists the experiments.
		{name: "failover", documented: slices.DeleteFunc(commandActions(drCommands, true), func(a string) bool {
			return strings.HasPrefix(a, "route53:") || (strings.HasPrefix(a, "fis:") && a != "fis:ListExperiments") || a == "cloudwatch:DescribeAlarms"
		})},
		// modules/stream-consumer: the stream, the DLQ (and its key), its logs, the handler's statements.
		{name: "stream-consumer", documented: []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams", "sqs:SendMessage", "kms:GenerateDataKey", "kms:Decrypt", "logs:CreateLogStream", "logs:PutLogEvents", "dynamodb:PutItem"}},
		// modules/dynamodb-export: exports of the named tables, the checkpoint, the objects (and their key), metrics, logs.
		{name: "export-scheduler", documented: []string{"dynamodb:ExportTableToPointInTime", "dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeExport", "dynamodb:GetItem", "dynamodb:PutItem", "s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl", "kms:GenerateDataKey", "kms:Decrypt", "cloudwatch:PutMetricData", "logs:CreateLogStream", "logs:PutLogEvents"}},
		{name: "export-schedule", documented: []string{"lambda:InvokeFunction"}},
		// modules/dr: AWS Backup's service role, with AWS's two managed
		// policies (what AWS Backup needs to back up and restore DynamoDB).
		// modules/dr: the role AWS FIS runs the pause drill as: the resource
		// policies of the secondary replicas (the pause statement), nothing else.
		{name: "fis-pause-replication", serviceOnly: true, documented: []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"}},
		{name: "backup", serviceOnly: true, documented: []string{
			"dynamodb:CreateBackup", "dynamodb:DeleteBackup", "dynamodb:DescribeBackup", "dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:StartAwsBackupJob",
			"dynamodb:RestoreTableFromAwsBackup", "dynamodb:RestoreTableFromBackup", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem",
			"backup:CopyFromBackupVault", "backup:CopyIntoBackupVault", "backup:DescribeBackupVault", "backup:StartRestoreJob", "kms:DescribeKey",
		}},
		// modules/dynops-batch: the run's tables, exports and prefixes; the
		// conditional writes to its write targets; the image and the logs.
		{name: "dynops-batch-job", documented: []string{"dynamodb:DescribeTable", "dynamodb:Scan", "dynamodb:DescribeExport", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
			"s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListBucket"}},
		{name: "dynops-batch-execution", documented: []string{"logs:CreateLogStream", "logs:PutLogEvents", "ecr:GetAuthorizationToken", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"}},
		// modules/ci-test-role: on the env's resources (not dev-t*), nothing.
		{name: "ci-test-role", postureOnly: true},
		// A role the CI suite creates: the boundary, with the widest policy
		// the suite could attach (everything): still nothing on the env.
		{name: "ci-created-role", postureOnly: true},
	}
	admin := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"}}}
	for i := range roles {
		r := &roles[i]
		switch r.name {
		case "ci-test-role":
			r.policies = []any{policyOf(t, ci, "aws_iam_policy.suite")}
			r.planCase, r.roleAddr = "ci test role", "aws_iam_role.this"
		case "backup":
			r.policies = managedPolicies(t, plans.Plan(t, "dr example"), "module.dr.aws_iam_role_policy_attachment.backup[")
			r.planCase, r.roleAddr = "dr example", "module.dr.aws_iam_role.backup[0]"
		case "ci-created-role":
			r.policies = []any{admin}
			r.boundary = policyOf(t, ci, "aws_iam_policy.boundary")
		case "fis-pause-replication":
			r.policies = []any{policyOf(t, dr, "module.dr.aws_iam_role_policy.fis[0]")}
			r.planCase, r.roleAddr = "dr example", "module.dr.aws_iam_role.fis[0]"
		case "failover":
			r.policies = []any{policyOf(t, dr, "module.dr.aws_iam_role_policy.failover[0]")}
			r.planCase, r.roleAddr = "dr example", "module.dr.aws_iam_role.failover[0]"
		case "stream-consumer":
			r.policies = []any{policyOf(t, consumer, "aws_iam_role_policy.consumer"), policyOf(t, consumer, "aws_iam_role_policy.handler[0]")}
			r.planCase, r.roleAddr = "stream consumer", "aws_iam_role.this[0]"
		case "export-scheduler":
			r.policies = []any{policyOf(t, export, "aws_iam_role_policy.scheduler_lambda[0]")}
			r.planCase, r.roleAddr = "export", "aws_iam_role.scheduler_lambda[0]"
		case "dynops-batch-job":
			r.policies = []any{policyOf(t, batch, "aws_iam_role_policy.job")}
			r.planCase, r.roleAddr = "dynops batch", "aws_iam_role.job"
		case "dynops-batch-execution":
			r.policies = []any{policyOf(t, batch, "aws_iam_role_policy.execution")}
			r.planCase, r.roleAddr = "dynops batch", "aws_iam_role.execution"
		case "export-schedule":
			r.policies = []any{policyOf(t, export, "aws_iam_role_policy.scheduler[0]")}
			r.planCase, r.roleAddr = "export", "aws_iam_role.scheduler[0]"
		default:
			r.policies = []any{policyOf(t, access, fmt.Sprintf("module.access.aws_iam_policy.this[%q]", r.name))}
			r.planCase, r.roleAddr = "example", fmt.Sprintf("module.access.aws_iam_role.this[%q]", r.name)
		}
	}
	// sts:AssumeRole of every other role, against that role's planned trust.
	type target struct {
		name, arn string
		trust     any
	}
	var targets []target
	for _, r := range roles {
		if r.roleAddr == "" {
			continue
		}
		planned := plans.Plan(t, r.planCase).ResourcePlannedValuesMap[r.roleAddr]
		require.NotNil(t, planned, "no %s in the plan of %s", r.roleAddr, r.planCase)
		var trust any
		require.NoError(t, json.Unmarshal([]byte(planned.AttributeValues["assume_role_policy"].(string)), &trust), "%s: trust", r.roleAddr)
		targets = append(targets, target{r.name, fmt.Sprintf("arn:aws:iam::%s:role/%s", accountID, planned.AttributeValues["name"]), trust})
	}

	actions := catalogue(t, []string{"dynamodb", "iam", "sts", "s3", "sqs", "kms", "lambda", "ssm", "route53", "cloudwatch", "logs", "backup"})
	var probes []string
	for a := range actions {
		if strings.HasPrefix(a, "dynamodb:") {
			probes = append(probes, a)
		}
	}
	for _, a := range append(slices.Clone(escalationProbes), posture...) {
		require.Contains(t, actions, a, "the catalogue lacks %s", a)
		probes = append(probes, a)
	}
	for _, r := range roles {
		for _, a := range r.documented {
			if _, ok := actions[a]; ok && !slices.Contains(probes, a) {
				probes = append(probes, a)
			}
		}
	}
	slices.Sort(probes)
	probes = slices.Compact(probes)

	// A legitimate session of each role: the tenant tag, MFA, the namespace
	// and service its conditions ask for; the request's key is the tenant's.
	ctx := map[string]any{
		"aws:PrincipalTag/tenant_id": "t1", "dynamodb:LeadingKeys": []string{"TENANT#t1"}, "aws:MultiFactorAuthPresent": "true",
		"cloudwatch:namespace": "dynops/Export", "aws:ResourceAccount": accountID,
	}
	var cells []cell
	// add asks action of role r; withPolicy adds the most permissive table
	// resource policy (the break-glass and failover roles can write one) to
	// a request on a table, its indexes or streams.
	add := func(r escalationRole, col, action string, mfa, withPolicy bool) {
		vars := map[string]any{}
		for k, v := range ctx {
			vars[k] = v
		}
		if !mfa {
			vars["aws:MultiFactorAuthPresent"] = "false"
		}
		if strings.HasPrefix(action, "kms:") {
			vars["kms:ViaService"] = "sqs." + region + ".amazonaws.com"
			if r.name == "export-scheduler" {
				vars["kms:ViaService"] = "s3." + region + ".amazonaws.com"
			}
		}
		if r.name == "failover" && slices.Contains([]string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem"}, action) {
			vars["dynamodb:LeadingKeys"] = []string{"dynops-dr-canary#1"}
		}
		want := denied
		documented := slices.Contains(r.documented, action)
		if documented && (mfa || !slices.Contains(permissions.BreakGlass(), action)) {
			want = allowed
		}
		sim := simulation{ServiceControlPolicies: []any{}, ResourceControlPolicies: []any{}, Request: request{
			Principal: fmt.Sprintf("arn:aws:sts::%s:assumed-role/dev-example-%s/s", accountID, r.name), Action: action,
			Resource: resource{Resource: actions[action], AccountID: accountID}, ContextVariables: vars,
		}}
		for i, p := range r.policies {
			sim.IdentityPolicies = append(sim.IdentityPolicies, namedPolicy{Name: fmt.Sprintf("%s-%d", r.name, i), Policy: p})
		}
		if r.boundary != nil {
			sim.PermissionBoundaries = []namedPolicy{{Name: r.name + "-boundary", Policy: r.boundary}}
		}
		switch {
		case strings.Contains(actions[action], ":table/"):
			// A table resource policy covers the table, its indexes and
			// streams (here also its backups, exports and imports: stricter);
			// it cannot grant account-level actions (Resource "*") or global tables.
			if withPolicy {
				sim.ResourcePolicy = permissive
				col += " +table policy"
			} else if want == allowed {
				// Alone, the role's own resource scoping decides (the
				// catalogue's sample table may not be one of its tables).
				want = "not-explicit"
			}
		case want == allowed && !strings.HasPrefix(action, "dynamodb:"):
			// Outside DynamoDB the identity policy alone decides, and it
			// scopes resources the catalogue's sample ARN may not match:
			// a documented action there must only not be denied explicitly.
			want = "not-explicit"
		}
		cells = append(cells, cell{row: action, col: col, want: want, sim: sim})
	}
	for _, r := range roles {
		asked := probes
		if r.postureOnly {
			asked = posture
		}
		for _, a := range asked {
			if !r.serviceOnly {
				add(r, r.name, a, true, true)
			}
			if strings.Contains(actions[a], ":table/") || r.serviceOnly {
				add(r, r.name, a, true, false)
			}
		}
		// sts:AssumeRole of every other role the modules create, against its
		// planned trust policy: no role reaches another.
		for _, tg := range targets {
			if tg.name == r.name {
				continue
			}
			sim := simulation{ServiceControlPolicies: []any{}, ResourceControlPolicies: []any{}, ResourcePolicy: tg.trust, Request: request{
				Principal: fmt.Sprintf("arn:aws:sts::%s:assumed-role/dev-example-%s/s", accountID, r.name), Action: "sts:AssumeRole",
				Resource: resource{Resource: tg.arn, AccountID: accountID}, ContextVariables: map[string]any{"aws:MultiFactorAuthPresent": "true", "aws:RequestTag/tenant_id": "t1", "aws:TagKeys": []string{"tenant_id"}},
			}}
			for i, p := range r.policies {
				sim.IdentityPolicies = append(sim.IdentityPolicies, namedPolicy{Name: fmt.Sprintf("%s-%d", r.name, i), Policy: p})
			}
			if r.boundary != nil {
				sim.PermissionBoundaries = []namedPolicy{{Name: r.name + "-boundary", Policy: r.boundary}}
			}
			cells = append(cells, cell{row: "sts:AssumeRole " + tg.name, col: r.name, want: denied, sim: sim})
		}
	}
	// The protection switches without MFA: the roles that hold them.
	for _, r := range roles {
		if r.name == "dynops-break-glass" || r.name == "failover" {
			for _, a := range permissions.BreakGlass() {
				add(r, r.name+" no MFA", a, false, true)
			}
		}
	}
	evaluateEscalation(t, cells)
	var withPolicy, rest []cell
	for _, c := range cells {
		if strings.HasSuffix(c.col, " +table policy") {
			withPolicy = append(withPolicy, c)
		} else {
			rest = append(rest, c)
		}
	}
	report(t, fmt.Sprintf("escalation: %d roles x %d actions + sts:AssumeRole of each of the %d roles with a planned trust (but its own), each identity policy (and boundary) alone", len(roles), len(probes), len(targets)), rest)
	report(t, "escalation: the same table requests with a table resource policy allowing everything", withPolicy)
	checkRolesDoc(t, roles, cells)
}

// managedPolicies returns the documents of the AWS managed policies the plan
// attaches at addresses starting with prefix, from testdata/aws-managed (AWS's
// published versions, as recorded by github.com/zoph-io/MAMIP).
func managedPolicies(t *testing.T, p *terraform.PlanStruct, prefix string) []any {
	t.Helper()
	var out []any
	for addr, r := range p.ResourcePlannedValuesMap {
		if !strings.HasPrefix(addr, prefix) {
			continue
		}
		arn, _ := r.AttributeValues["policy_arn"].(string)
		name := arn[strings.LastIndex(arn, "/")+1:]
		raw, err := os.ReadFile(filepath.Join("testdata", "aws-managed", name+".json"))
		require.NoError(t, err, "%s attaches %s: add its document (AWS's current version) to testdata/aws-managed", addr, arn)
		var v struct{ PolicyVersion struct{ Document any } }
		require.NoError(t, json.Unmarshal(raw, &v), "testdata/aws-managed/%s.json", name)
		out = append(out, v.PolicyVersion.Document)
	}
	require.NotEmpty(t, out, "no policy attachment %s* in the plan", prefix)
	return out
}

// evaluateEscalation runs the cells and maps "not-explicit" expectations.
func evaluateEscalation(t *testing.T, cells []cell) {
	t.Helper()
	evaluate(t, cells)
	for i := range cells {
		if cells[i].want == "not-explicit" {
			cells[i].want = allowed
			if cells[i].got.OverallResult == implicit {
				cells[i].want = implicit
			}
		}
	}
}

// TestFISRoleReachesOnlyTheSecondaryReplicas_DDB_SEC_01: the role AWS FIS
// runs modules/dr's pause drill as (the escalation matrix asks the primary
// region's tables, where it has nothing) may read and change the resource
// policy of the secondary replicas of the env's global tables, and nothing
// else there or anywhere: not the primary replica, not another table, not
// an item.
func TestFISRoleReachesOnlyTheSecondaryReplicas_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	dr := planCasePolicies(t, "dr example")
	m := &matrix{principal: "arn:aws:sts::" + accountID + ":assumed-role/dev-dynamodb-fis-pause-replication/fis", policy: policyOf(t, dr, "module.dr.aws_iam_role_policy.fis[0]")}
	replica := "arn:aws:dynamodb:eu-central-1:" + accountID + ":table/dev-example-session"
	primary := "arn:aws:dynamodb:" + region + ":" + accountID + ":table/dev-example-session"
	other := "arn:aws:dynamodb:eu-central-1:" + accountID + ":table/dev-example-user"
	for _, a := range []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"} {
		m.add("fis-pause-replication", a+" secondary replica", allowed, a, replica, nil)
		m.add("fis-pause-replication", a+" primary replica", denied, a, primary, nil)
		m.add("fis-pause-replication", a+" another table", denied, a, other, nil)
	}
	for _, a := range []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateTable", "dynamodb:DeleteTable", "dynamodb:Scan"} {
		m.add("fis-pause-replication", a+" secondary replica", denied, a, replica, nil)
	}
	evaluate(t, m.cells)
	report(t, "fis-pause-replication", m.cells)
}

// TestFISRoleCappedAndTrustNamesExperiments_DDB_SEC_01 (issue 44): the FIS
// role writes a resource policy on the secondary replicas (the pause
// statement), and a resource policy can grant anything. With the most
// permissive table policy it could write, the role still gets nothing
// outside its documented set (the explicit Deny, not the missing Allow,
// decides); a DR fence with a break-glass role denies it the policy actions,
// so it cannot lift the fence; and only an experiment of this account in the
// template's region may assume it (aws:SourceArn and aws:SourceAccount).
func TestFISRoleCappedAndTrustNamesExperiments_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	dr := planCasePolicies(t, "dr example")
	role := "dev-dynamodb-fis-pause-replication"
	m := &matrix{principal: "arn:aws:sts::" + accountID + ":assumed-role/" + role + "/fis", policy: policyOf(t, dr, "module.dr.aws_iam_role_policy.fis[0]")}
	replica := "arn:aws:dynamodb:eu-central-1:" + accountID + ":table/dev-example-session"
	for _, a := range []string{"dynamodb:DeleteTable", "dynamodb:UpdateTable", "dynamodb:UpdateContinuousBackups", "dynamodb:Scan", "dynamodb:PutItem"} {
		m.add("fis-pause-replication", a+" replica +table policy granting it", explicit, a, replica, nil)
		m.cells[len(m.cells)-1].sim.ResourcePolicy = permissive
	}
	fenced, err := failover.WithFence("", replica, "arn:aws:iam::"+accountID+":role/dev-dynamodb-break-glass")
	require.NoError(t, err)
	var fence any
	require.NoError(t, json.Unmarshal([]byte(fenced), &fence))
	for _, a := range []string{"dynamodb:DeleteResourcePolicy", "dynamodb:PutResourcePolicy"} {
		m.add("fis-pause-replication", a+" fenced replica", explicit, a, replica, nil)
		m.cells[len(m.cells)-1].sim.ResourcePolicy = fence
	}

	planned := plans.Plan(t, "dr example").ResourcePlannedValuesMap["module.dr.aws_iam_role.fis[0]"]
	require.NotNil(t, planned, "no module.dr.aws_iam_role.fis[0] in the plan of dr example")
	var trust any
	require.NoError(t, json.Unmarshal([]byte(planned.AttributeValues["assume_role_policy"].(string)), &trust))
	roleARN := "arn:aws:iam::" + accountID + ":role/" + role
	experiment := func(region, account string) string {
		return "arn:aws:fis:" + region + ":" + account + ":experiment/EXP1a2b3c4d5e6f7"
	}
	for _, c := range []struct {
		col, want string
		ctx       map[string]any
	}{
		{"experiment of the account in the template's region", allowed, map[string]any{"aws:SourceAccount": accountID, "aws:SourceArn": experiment("eu-central-1", accountID)}},
		{"no aws:SourceArn", denied, map[string]any{"aws:SourceAccount": accountID}},
		{"experiment in another region", denied, map[string]any{"aws:SourceAccount": accountID, "aws:SourceArn": experiment(region, accountID)}},
		{"another account's experiment", denied, map[string]any{"aws:SourceAccount": "999999999999", "aws:SourceArn": experiment("eu-central-1", "999999999999")}},
	} {
		m.cells = append(m.cells, cell{row: "sts:AssumeRole fis.amazonaws.com", col: c.col, want: c.want, sim: simulation{
			IdentityPolicies: []namedPolicy{}, ServiceControlPolicies: []any{}, ResourceControlPolicies: []any{}, ResourcePolicy: trust,
			Request: request{Principal: "fis.amazonaws.com", Action: "sts:AssumeRole", Resource: resource{Resource: roleARN, AccountID: accountID}, ContextVariables: c.ctx},
		}})
	}
	evaluate(t, m.cells)
	report(t, "fis-pause-replication: its cap, a fenced replica, its trust", m.cells)
}

// TestOperatorOnlyAppendsToTheAuditLogGroup_DDB_SEC_01 (issue 44): with
// audit_log_group, the operator and break-glass roles may create streams in
// and put events into the module's audit log group (dynops
// --audit-log-group), and nothing else there: no DeleteLogGroup,
// DeleteLogStream or PutRetentionPolicy, and no events into another group.
func TestOperatorOnlyAppendsToTheAuditLogGroup_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	got := planExample(t, "example with audit log group")
	p := plans.Plan(t, "example with audit log group")
	lg := p.ResourcePlannedValuesMap["module.access.aws_cloudwatch_log_group.audit[0]"]
	require.NotNil(t, lg, "no audit log group in the plan")
	assert.Equal(t, "/dynops/dev-audit", lg.AttributeValues["name"])
	assert.EqualValues(t, 400, lg.AttributeValues["retention_in_days"])
	assert.NotEmpty(t, lg.AttributeValues["kms_key_id"])
	group := "arn:aws:logs:" + region + ":" + accountID + ":log-group:/dynops/dev-audit"
	stream := group + ":log-stream:run-1"
	other := "arn:aws:logs:" + region + ":" + accountID + ":log-group:/aws/lambda/dev-other"
	var cells []cell
	for _, role := range []string{"dynops-operator", "dynops-break-glass"} {
		var policy any
		require.NoError(t, json.Unmarshal([]byte(got.policies[role]), &policy))
		m := &matrix{principal: "arn:aws:sts::" + accountID + ":assumed-role/dev-example-" + role + "/s", policy: policy,
			tags: map[string]any{"aws:MultiFactorAuthPresent": "true"}}
		m.add(role, "logs:CreateLogStream audit group", allowed, "logs:CreateLogStream", stream, nil)
		m.add(role, "logs:PutLogEvents audit group", allowed, "logs:PutLogEvents", stream, nil)
		m.add(role, "logs:PutLogEvents another group", denied, "logs:PutLogEvents", other+":log-stream:x", nil)
		m.add(role, "logs:CreateLogStream another group", denied, "logs:CreateLogStream", other+":log-stream:x", nil)
		m.add(role, "logs:DeleteLogGroup audit group", denied, "logs:DeleteLogGroup", group+":*", nil)
		m.add(role, "logs:DeleteLogStream audit group", denied, "logs:DeleteLogStream", stream, nil)
		m.add(role, "logs:PutRetentionPolicy audit group", denied, "logs:PutRetentionPolicy", group+":*", nil)
		m.add(role, "logs:DeleteRetentionPolicy audit group", denied, "logs:DeleteRetentionPolicy", group+":*", nil)
		cells = append(cells, m.cells...)
	}
	evaluate(t, cells)
	report(t, "operator and break-glass on the audit log group", cells)
}
