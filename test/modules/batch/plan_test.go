package batch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/iamsim"
)

const (
	module  = "modules/dynops-batch"
	example = "modules/dynops-batch/examples/complete"
	account = "123456789012"
	region  = "eu-west-1"
	denied  = iamsim.Denied // either kind of deny
)

func table(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", region, account, name)
}

// readOnly is the module planned for a diff (no write targets) with an image
// outside ECR.
func readOnly() map[string]any {
	return map[string]any{
		"subnet_ids":         []string{"subnet-0123456789abcdef0"},
		"security_group_ids": []string{"sg-0123456789abcdef0"},
		"image":              "ghcr.io/hoge-inc/dynops@sha256:" + strings.Repeat("ab", 32),
		"source_table_arns":  []string{table("prod-hoge-user"), table("prod-hoge-user-restored")},
		"run_location":       map[string]any{"bucket": "prod-hoge-dynops-runs", "prefix": "diff"},
	}
}

func with(over map[string]any) map[string]any {
	v := readOnly()
	for k, x := range over {
		v[k] = x
	}
	return v
}

// plans: the complete example (repair: write targets, an ECR image, an
// export prefix) and the module alone for a diff (no writes, no ECR), in
// one terraform run.
var plans = func() *harness.PlanGroup {
	g := harness.NewPlanGroup(
		harness.PlanCase{Name: "complete", Dir: example, Vars: func(testing.TB) map[string]any { return map[string]any{} }},
		harness.PlanCase{Name: "read only", Dir: module, Vars: func(testing.TB) map[string]any { return readOnly() }},
	)
	g.Quiet = true
	return g
}()

func attrs(t *testing.T, name, addr string) map[string]any {
	t.Helper()
	r, ok := plans.Plan(t, name).ResourcePlannedValuesMap[addr]
	require.True(t, ok, "%s: no %s in the plan", name, addr)
	return r.AttributeValues
}

func policy(t *testing.T, name, addr string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(attrs(t, name, addr)["policy"].(string)), &v), "%s %s", name, addr)
	return v
}

// TestPlanComputeQueueAndWorker: a Fargate compute environment capped at
// max_vcpus in the given subnets, the queue on it, the worker's job
// definition (Fargate sizing, private network, awslogs to the module's log
// group, retries and timeout), the log group's retention.
func TestPlanComputeQueueAndWorker(t *testing.T) {
	t.Parallel()
	const m = "module.dynops_batch."
	ce := attrs(t, "complete", m+"aws_batch_compute_environment.this")
	assert.Equal(t, "MANAGED", ce["type"])
	res := ce["compute_resources"].([]any)[0].(map[string]any)
	assert.Equal(t, "FARGATE", res["type"])
	assert.EqualValues(t, 64, res["max_vcpus"])
	assert.ElementsMatch(t, []any{"subnet-0123456789abcdef0"}, res["subnets"])
	assert.Nil(t, ce["service_role"], "Batch's service-linked role, no role of ours")

	q := attrs(t, "complete", m+"aws_batch_job_queue.this")
	assert.Equal(t, "prod-hoge-dynops-batch", q["name"])
	assert.Equal(t, "ENABLED", q["state"])

	jd := attrs(t, "complete", m+"aws_batch_job_definition.worker")
	assert.Equal(t, "prod-hoge-dynops-batch-worker", jd["name"])
	assert.Equal(t, []any{"FARGATE"}, jd["platform_capabilities"])
	assert.EqualValues(t, 3, jd["retry_strategy"].([]any)[0].(map[string]any)["attempts"])
	assert.EqualValues(t, 14400, jd["timeout"].([]any)[0].(map[string]any)["attempt_duration_seconds"])
	cp, ok := jd["container_properties"].(string)
	require.True(t, ok, "container_properties unknown at plan: %v", jd["container_properties"])
	var c struct {
		Image                string
		EphemeralStorage     struct{ SizeInGiB int } `json:"ephemeralStorage"`
		JobRoleArn           string
		ExecutionRoleArn     string
		ResourceRequirements []struct{ Type, Value string }
		NetworkConfiguration struct {
			AssignPublicIP string `json:"assignPublicIp"`
		}
		LogConfiguration struct {
			LogDriver string
			Options   map[string]string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(cp), &c))
	assert.Equal(t, account+".dkr.ecr."+region+".amazonaws.com/dynops:v2.4.0", c.Image)
	assert.ElementsMatch(t, []struct{ Type, Value string }{{"VCPU", "2"}, {"MEMORY", "8192"}}, c.ResourceRequirements)
	assert.Equal(t, "DISABLED", c.NetworkConfiguration.AssignPublicIP)
	assert.Equal(t, 50, c.EphemeralStorage.SizeInGiB, "the spill disk asked for")
	assert.Equal(t, "awslogs", c.LogConfiguration.LogDriver)
	assert.Equal(t, "/aws/batch/prod-hoge-dynops-batch", c.LogConfiguration.Options["awslogs-group"])
	assert.Equal(t, "arn:aws:iam::"+account+":role/prod-hoge-dynops-batch-job", c.JobRoleArn)
	assert.Equal(t, "arn:aws:iam::"+account+":role/prod-hoge-dynops-batch-execution", c.ExecutionRoleArn)
	assert.Equal(t, c.JobRoleArn, "arn:aws:iam::"+account+":role/"+attrs(t, "complete", m+"aws_iam_role.job")["name"].(string), "the definition names the module's job role")

	lg := attrs(t, "complete", m+"aws_cloudwatch_log_group.this")
	assert.EqualValues(t, 30, lg["retention_in_days"], "DDB-MON-02")
}

// TestPlanJobRoleTrust_DDB_SEC_01: the job role trusts the Batch tasks of
// its own account and, with kubernetes_service_account, that one service
// account of the cluster's OIDC provider (examples/kubernetes); without it,
// nothing else.
func TestPlanJobRoleTrust_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	type statement struct {
		Action    any
		Principal map[string]any
		Condition map[string]map[string]any
	}
	trust := func(name, addr string) []statement {
		var doc struct{ Statement []statement }
		require.NoError(t, json.Unmarshal([]byte(attrs(t, name, addr)["assume_role_policy"].(string)), &doc))
		return doc.Statement
	}
	full := trust("complete", "module.dynops_batch.aws_iam_role.job")
	require.Len(t, full, 2)
	assert.Equal(t, "ecs-tasks.amazonaws.com", full[0].Principal["Service"])
	assert.Equal(t, account, full[0].Condition["StringEquals"]["aws:SourceAccount"])
	issuer := "oidc.eks." + region + ".amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
	assert.Equal(t, "arn:aws:iam::"+account+":oidc-provider/"+issuer, full[1].Principal["Federated"])
	assert.Equal(t, "sts:AssumeRoleWithWebIdentity", full[1].Action)
	assert.Equal(t, "system:serviceaccount:dynops:dynops-diff", full[1].Condition["StringEquals"][issuer+":sub"])
	assert.Equal(t, "sts.amazonaws.com", full[1].Condition["StringEquals"][issuer+":aud"])
	only := trust("read only", "aws_iam_role.job")
	require.Len(t, only, 1, "no service account: the Batch tasks only")
	assert.Equal(t, "ecs-tasks.amazonaws.com", only[0].Principal["Service"])
}

// TestPlanBatchValidations: every validation message of modules/dynops-batch,
// with its rule and its fix.
func TestPlanBatchValidations(t *testing.T) {
	t.Parallel()
	worker := func(w map[string]any) map[string]any { return with(map[string]any{"worker": w}) }
	harness.ExpectRefusals(t, module, []harness.Refusal{
		{Name: "DDB-NAME-01 name", Vars: with(map[string]any{"name": "Batch_1"}), Want: []string{"DDB-NAME-01: name must be 4-42 lower case letters"}},
		{Name: "DDB-SEC-05 no subnets", Vars: with(map[string]any{"subnet_ids": []string{}}), Want: []string{"DDB-SEC-05: subnet_ids must list at least one subnet ID"}},
		{Name: "DDB-SEC-05 not a security group", Vars: with(map[string]any{"security_group_ids": []string{"subnet-0123456789abcdef0"}}), Want: []string{"DDB-SEC-05: security_group_ids must list at least one security group ID"}},
		{Name: "DDB-CAP-04 max_vcpus zero", Vars: with(map[string]any{"max_vcpus": 0}), Want: []string{"DDB-CAP-04: max_vcpus must be a whole number of vCPUs from 1 to 10000"}},
		{Name: "DDB-SEC-01 image latest", Vars: with(map[string]any{"image": "hoge/dynops:latest"}), Want: []string{"DDB-SEC-01: image must name a tag other than latest, or a digest", "the same dynops"}},
		{Name: "DDB-SEC-01 image untagged", Vars: with(map[string]any{"image": "hoge/dynops"}), Want: []string{"DDB-SEC-01: image must name a tag other than latest"}},
		{Name: "DDB-CAP-04 vcpu not Fargate", Vars: worker(map[string]any{"vcpu": 3}), Want: []string{"DDB-CAP-04: worker.vcpu must be a Fargate vCPU value"}},
		{Name: "DDB-CAP-04 memory not for the vcpu", Vars: worker(map[string]any{"vcpu": 1, "memory_mib": 16384}), Want: []string{"DDB-CAP-04: worker.memory_mib must be a Fargate memory for worker.vcpu", "1 vCPU 2048-8192"}},
		{Name: "DDB-CAP-04 memory step on 8 vCPU", Vars: worker(map[string]any{"vcpu": 8, "memory_mib": 17408}), Want: []string{"DDB-CAP-04: worker.memory_mib must be a Fargate memory for worker.vcpu"}},
		{Name: "DDB-CAP-04 task storage", Vars: worker(map[string]any{"ephemeral_storage_gib": 201}), Want: []string{"DDB-CAP-04: worker.ephemeral_storage_gib must be a whole number from 20 to 200"}},
		{Name: "DDB-CAP-04 retries", Vars: worker(map[string]any{"retry_attempts": 11}), Want: []string{"DDB-CAP-04: worker.retry_attempts must be 1 to 10"}},
		{Name: "DDB-CAP-04 timeout", Vars: worker(map[string]any{"timeout_seconds": 30}), Want: []string{"DDB-CAP-04: worker.timeout_seconds must be a whole number of at least 60"}},
		{Name: "DDB-CAP-04 vcpu above max_vcpus", Vars: with(map[string]any{"max_vcpus": 2, "worker": map[string]any{"vcpu": 4, "memory_mib": 8192}}), Want: []string{"DDB-CAP-04: worker.vcpu must not exceed max_vcpus"}},
		{Name: "DDB-MON-02 retention", Vars: with(map[string]any{"log_retention_days": 0}), Want: []string{"DDB-MON-02: log_retention_days must be a CloudWatch Logs retention"}},
		{Name: "DDB-SEC-04 log key alias", Vars: with(map[string]any{"log_kms_key_arn": "alias/logs"}), Want: []string{"DDB-SEC-04: log_kms_key_arn must be a KMS key ARN"}},
		{Name: "DDB-SEC-01 no source tables", Vars: with(map[string]any{"source_table_arns": []string{}}), Want: []string{"DDB-SEC-01: source_table_arns must list at least one table ARN"}},
		{Name: "DDB-SEC-01 source wildcard", Vars: with(map[string]any{"source_table_arns": []string{table("prod-*")}}), Want: []string{"DDB-SEC-01: source_table_arns must list at least one table ARN", "not a wildcard"}},
		{Name: "DDB-SEC-01 source in two regions", Vars: with(map[string]any{"source_table_arns": []string{table("prod-hoge-user"), "arn:aws:dynamodb:us-east-1:" + account + ":table/prod-hoge-user"}}), Want: []string{"DDB-SEC-01: source_table_arns must all be in one account and region"}},
		{Name: "DDB-SEC-01 export prefix empty", Vars: with(map[string]any{"export_locations": []any{map[string]any{"bucket": "prod-hoge-dynamodb-exports", "prefix": ""}}}), Want: []string{"DDB-SEC-01: export_locations must be { bucket", "whole bucket"}},
		{Name: "DDB-SEC-01 run prefix with slash", Vars: with(map[string]any{"run_location": map[string]any{"bucket": "prod-hoge-dynops-runs", "prefix": "/diff/"}}), Want: []string{"DDB-SEC-01: run_location must be { bucket"}},
		{Name: "DDB-SEC-01 write target wildcard", Vars: with(map[string]any{"write_target_table_arns": []string{"*"}}), Want: []string{"DDB-SEC-01: write_target_table_arns must be table ARNs"}},
		{Name: "DDB-SEC-01 service account wildcard", Vars: with(map[string]any{"kubernetes_service_account": map[string]any{"oidc_provider_arn": "arn:aws:iam::" + account + ":oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/X", "namespace": "dynops", "name": "*"}}), Want: []string{"DDB-SEC-01: kubernetes_service_account must be", "no wildcards"}},
		{Name: "DDB-SEC-04 data key alias", Vars: with(map[string]any{"data_kms_key_arns": []string{"alias/aws/s3"}}), Want: []string{"DDB-SEC-04: data_kms_key_arns must be KMS key ARNs"}},
	})
}

type probe struct{ name, action, resource, want string }

// everything is the most permissive resource policy a table or bucket of
// the account could carry: with it, only the role's own explicit Deny
// keeps it inside its documented set.
var everything = map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
	"Sid": "EverythingToEveryone", "Effect": "Allow", "Principal": map[string]any{"AWS": "*"}, "Action": "*", "Resource": "*",
}}}

// evaluate asks the evaluator each probe of the shards' roles; a
// s3:ListBucket probe's name ends with the prefix it lists.
func evaluate(t *testing.T, title string, identity any, probes []probe) {
	t.Helper()
	evaluateWith(t, title, identity, nil, probes)
}

// evaluateWith is evaluate with a resource policy on every request.
func evaluateWith(t *testing.T, title string, identity, resourcePolicy any, probes []probe) {
	t.Helper()
	sims := make([]iamsim.Simulation, len(probes))
	asked := make([]iamsim.Probe, len(probes))
	for i, p := range probes {
		asked[i] = iamsim.Probe{Name: p.name, Action: p.action, Resource: p.resource, Want: p.want}
		if p.action == "s3:ListBucket" {
			asked[i].Context = map[string]any{"s3:prefix": p.name[strings.LastIndex(p.name, " ")+1:]}
		}
		sims[i] = iamsim.Simulation{
			IdentityPolicies:        []iamsim.NamedPolicy{{Name: "identity", Policy: identity}},
			ServiceControlPolicies:  []any{},
			ResourceControlPolicies: []any{},
			Request: iamsim.Request{Principal: "arn:aws:sts::" + account + ":assumed-role/prod-hoge-dynops-batch-job/task", Action: p.action,
				Resource: iamsim.Resource{Resource: p.resource, AccountID: account}, ContextVariables: asked[i].Context},
			ResourcePolicy: resourcePolicy,
		}
	}
	iamsim.Expect(t, title, sims, asked)
}

// TestJobRoleScopedToTheRun_DDB_SEC_01: the shards' role, asked of a real
// IAM evaluator over the planned policy: it reads the named tables and their
// exports, reads the export prefix, reads and writes the run prefix, and
// writes (conditionally) the named target table; it cannot touch another
// prefix, another bucket, another table, write with BatchWriteItem, or
// delete the run's objects. Planned without write targets, it writes no
// table at all. With a resource policy allowing everything on the table or
// bucket, its own Deny keeps it inside its documented set.
func TestJobRoleScopedToTheRun_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	user, other := table("prod-hoge-user"), table("prod-hoge-order")
	runs, exports := "arn:aws:s3:::prod-hoge-dynops-runs", "arn:aws:s3:::prod-hoge-dynamodb-exports"
	evaluate(t, "dynops-batch job role, complete example (repair of prod-hoge-user)", policy(t, "complete", "module.dynops_batch.aws_iam_role_policy.job"), []probe{
		{"Scan the source table", "dynamodb:Scan", user, iamsim.Allowed},
		{"DescribeTable of the source table", "dynamodb:DescribeTable", user, iamsim.Allowed},
		{"DescribeExport of the source table's export", "dynamodb:DescribeExport", user + "/export/01700000000000-abcdef12", iamsim.Allowed},
		{"Scan another table", "dynamodb:Scan", other, denied},
		{"DescribeExport of another table's export", "dynamodb:DescribeExport", other + "/export/01700000000000-abcdef12", denied},
		{"PutItem on the target table", "dynamodb:PutItem", user, iamsim.Allowed},
		{"DeleteItem on the target table", "dynamodb:DeleteItem", user, iamsim.Allowed},
		{"UpdateItem on the target table", "dynamodb:UpdateItem", user, iamsim.Allowed},
		{"BatchWriteItem on the target table (no condition)", "dynamodb:BatchWriteItem", user, denied},
		{"PutItem on another table", "dynamodb:PutItem", other, denied},
		{"DeleteTable of the target table", "dynamodb:DeleteTable", user, denied},
		{"GetObject in the run prefix", "s3:GetObject", runs + "/diff/run-1/map/00000.bucket", iamsim.Allowed},
		{"PutObject in the run prefix", "s3:PutObject", runs + "/diff/run-1/map/00000.bucket", iamsim.Allowed},
		{"PutObject in another prefix of the run bucket", "s3:PutObject", runs + "/other/run-1/x", denied},
		{"PutObject beside the prefix (diff-other)", "s3:PutObject", runs + "/diff-other/x", denied},
		{"DeleteObject in the run prefix", "s3:DeleteObject", runs + "/diff/run-1/map/00000.bucket", denied},
		{"ListBucket of the run bucket under diff/", "s3:ListBucket", runs, iamsim.Allowed},
		{"ListBucket of the run bucket under other/", "s3:ListBucket", runs, denied},
		{"GetObject in the export prefix", "s3:GetObject", exports + "/exports/prod-hoge-user/AWSDynamoDB/01700000000000-abcdef12/manifest-files.json", iamsim.Allowed},
		{"GetObject of another table's export", "s3:GetObject", exports + "/exports/prod-hoge-order/AWSDynamoDB/x/manifest-files.json", denied},
		{"PutObject in the export prefix", "s3:PutObject", exports + "/exports/prod-hoge-user/x", denied},
		{"ListBucket of the export bucket under exports/prod-hoge-user/", "s3:ListBucket", exports, iamsim.Allowed},
		{"ListBucket of the export bucket under exports/prod-hoge-order/", "s3:ListBucket", exports, denied},
		{"GetObject in another bucket", "s3:GetObject", "arn:aws:s3:::prod-hoge-secrets/diff/x", denied},
	})
	evaluate(t, "dynops-batch job role without write targets (a diff)", policy(t, "read only", "aws_iam_role_policy.job"), []probe{
		{"Scan a source table", "dynamodb:Scan", table("prod-hoge-user-restored"), iamsim.Allowed},
		{"PutItem on a source table", "dynamodb:PutItem", user, denied},
		{"DeleteItem on a source table", "dynamodb:DeleteItem", user, denied},
		{"UpdateItem on a source table", "dynamodb:UpdateItem", user, denied},
		{"GetObject in any export bucket", "s3:GetObject", exports + "/exports/prod-hoge-user/x", denied},
		{"PutObject in the run prefix", "s3:PutObject", runs + "/diff/run-1/x", iamsim.Allowed},
	})
	evaluateWith(t, "dynops-batch job role, the resource carrying a policy that allows everything", policy(t, "complete", "module.dynops_batch.aws_iam_role_policy.job"), everything, []probe{
		{"DeleteTable of the target table", "dynamodb:DeleteTable", user, iamsim.Explicit},
		{"BatchWriteItem on the target table", "dynamodb:BatchWriteItem", user, iamsim.Explicit},
		{"PutResourcePolicy on the target table", "dynamodb:PutResourcePolicy", user, iamsim.Explicit},
		{"DeleteObject in the run prefix", "s3:DeleteObject", runs + "/diff/run-1/x", iamsim.Explicit},
		{"PutBucketPolicy of the run bucket", "s3:PutBucketPolicy", runs, iamsim.Explicit},
		{"PutItem on the target table", "dynamodb:PutItem", user, iamsim.Allowed},
	})
	evaluateWith(t, "dynops-batch job role without write targets, the table allowing everything", policy(t, "read only", "aws_iam_role_policy.job"), everything, []probe{
		{"PutItem on a source table", "dynamodb:PutItem", user, iamsim.Explicit},
		{"UpdateItem on a source table", "dynamodb:UpdateItem", user, iamsim.Explicit},
		{"Scan of a source table", "dynamodb:Scan", user, iamsim.Allowed},
	})
}

// TestExecutionRolePullsOnlyItsImage_DDB_SEC_01: the execution role pulls
// from the image's ECR repository only and writes only the module's log
// group; with an image outside ECR it has no ECR permission at all.
func TestExecutionRolePullsOnlyItsImage_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	repo := "arn:aws:ecr:" + region + ":" + account + ":repository/"
	logs := "arn:aws:logs:" + region + ":" + account + ":log-group:"
	evaluate(t, "dynops-batch execution role, ECR image", policy(t, "complete", "module.dynops_batch.aws_iam_role_policy.execution"), []probe{
		{"BatchGetImage of dynops", "ecr:BatchGetImage", repo + "dynops", iamsim.Allowed},
		{"BatchGetImage of another repository", "ecr:BatchGetImage", repo + "payments", denied},
		{"PutImage to dynops", "ecr:PutImage", repo + "dynops", denied},
		{"PutLogEvents to the module's log group", "logs:PutLogEvents", logs + "/aws/batch/prod-hoge-dynops-batch:log-stream:shard/worker/1", iamsim.Allowed},
		{"PutLogEvents to another log group", "logs:PutLogEvents", logs + "/dynops/audit:log-stream:x", denied},
	})
	evaluate(t, "dynops-batch execution role, image outside ECR", policy(t, "read only", "aws_iam_role_policy.execution"), []probe{
		{"GetAuthorizationToken", "ecr:GetAuthorizationToken", "*", denied},
		{"BatchGetImage of dynops", "ecr:BatchGetImage", repo + "dynops", denied},
	})
	evaluateWith(t, "dynops-batch execution role, the log group allowing everything", policy(t, "complete", "module.dynops_batch.aws_iam_role_policy.execution"), everything, []probe{
		{"DeleteLogGroup of the module's log group", "logs:DeleteLogGroup", logs + "/aws/batch/prod-hoge-dynops-batch", iamsim.Explicit},
		{"PutImage to dynops", "ecr:PutImage", repo + "dynops", iamsim.Explicit},
	})
}
