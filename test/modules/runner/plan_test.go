// Package runner tests modules/dynops-runner offline: the task of `dynops
// runbook run --in-aws` runs on Fargate without a public IP, logs with
// retention and the given KMS key, and its role holds the dynops-operator's
// rights (the policy modules/dynamodb-access renders) plus the state prefix
// and its log group, nothing more: evaluator cells through the real IAM
// evaluator (DDB-SEC-01, DDB-SEC-03).
package runner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/iamsim"
)

const (
	example   = "modules/dynops-runner/examples/complete"
	accountID = "123456789012"
	kmsKey    = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555"
)

func TestPlanRunner_DDB_SEC_01(t *testing.T) {
	opts := harness.PlanOptions(t, example, map[string]any{"kms_key_arn": kmsKey})
	opts.Logger = logger.Discard
	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	res := func(addr string) map[string]any {
		r := p.ResourcePlannedValuesMap["module.runner."+addr]
		require.NotNil(t, r, addr)
		return r.AttributeValues
	}

	td := res("aws_ecs_task_definition.this")
	assert.Equal(t, []any{"FARGATE"}, td["requires_compatibilities"])
	assert.Equal(t, "awsvpc", td["network_mode"])
	var containers []struct {
		Name             string   `json:"name"`
		Image            string   `json:"image"`
		EntryPoint       []string `json:"entryPoint"`
		LogConfiguration struct {
			Options map[string]string `json:"options"`
		} `json:"logConfiguration"`
	}
	require.NoError(t, json.Unmarshal([]byte(td["container_definitions"].(string)), &containers))
	require.Len(t, containers, 1)
	assert.Equal(t, "dynops", containers[0].Name, "the container --task-container names by default")
	assert.Equal(t, []string{"dynops"}, containers[0].EntryPoint)
	assert.Equal(t, "/dynops/prod-runner", containers[0].LogConfiguration.Options["awslogs-group"])

	lg := res("aws_cloudwatch_log_group.this")
	assert.EqualValues(t, 400, lg["retention_in_days"])
	assert.Equal(t, kmsKey, lg["kms_key_id"])
	assert.Nil(t, p.ResourcePlannedValuesMap["module.runner.module.operator.aws_iam_policy.this[\"dynops-operator\"]"], "the access module only renders the operator policy here")

	flags := p.RawPlan.OutputChanges["dynops_flags"]
	require.NotNil(t, flags)
	assert.NotContains(t, fmt.Sprint(flags.After), "--task-public-ip", "no public IP by default")

	docs := outputDocs(t, p)
	var operator struct{ Statement []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(docs["operator"]), &operator))
	assert.Equal(t, "DenyOutsideDocumentedSet", operator.Statement[len(operator.Statement)-1]["Sid"], "the operator's cap comes with its policy")

	// The evaluator: the task role's two policies together.
	policies := []iamsim.NamedPolicy{}
	for name, doc := range docs {
		var v any
		require.NoError(t, json.Unmarshal([]byte(doc), &v))
		policies = append(policies, iamsim.NamedPolicy{Name: name, Policy: v})
	}
	table := "arn:aws:dynamodb:eu-west-1:" + accountID + ":table/prod-hoge-user"
	state := "arn:aws:s3:::acme-oncall/dynops/runbooks/INC-1/pitr-restore.state.json"
	cells := []struct {
		name, want, action, arn, account string
		ctx                              map[string]any
	}{
		{"operator action on an env table", iamsim.Allowed, "dynamodb:DescribeTable", table, accountID, nil},
		{"operator restore on an env table", iamsim.Allowed, "dynamodb:RestoreTableToPointInTime", table, accountID, nil},
		{"read the run state", iamsim.Allowed, "s3:GetObject", state, accountID, nil},
		{"write the run state", iamsim.Allowed, "s3:PutObject", state, accountID, nil},
		{"list the state prefix", iamsim.Allowed, "s3:ListBucket", "arn:aws:s3:::acme-oncall", accountID, map[string]any{"s3:prefix": "dynops/runbooks/INC-1/"}},
		{"append to its log group", iamsim.Allowed, "logs:PutLogEvents", "arn:aws:logs:eu-west-1:" + accountID + ":log-group:/dynops/prod-runner:log-stream:audit", accountID, nil},
		{"write another prefix of the bucket", "Denied", "s3:PutObject", "arn:aws:s3:::acme-oncall/other/x.json", accountID, nil},
		{"list another prefix", "Denied", "s3:ListBucket", "arn:aws:s3:::acme-oncall", accountID, map[string]any{"s3:prefix": "other/"}},
		{"another env's table", "Denied", "dynamodb:DescribeTable", "arn:aws:dynamodb:eu-west-1:" + accountID + ":table/dev-hoge-user", accountID, nil},
		{"another account's table", "Denied", "dynamodb:DescribeTable", "arn:aws:dynamodb:eu-west-1:210987654321:table/prod-hoge-user", "210987654321", nil},
		{"IAM: create a role", iamsim.Explicit, "iam:CreateRole", "arn:aws:iam::" + accountID + ":role/x", accountID, nil},
		{"IAM: pass a role", iamsim.Explicit, "iam:PassRole", "arn:aws:iam::" + accountID + ":role/prod-hoge-dynops-runner-task", accountID, nil},
		{"start another task", iamsim.Explicit, "ecs:RunTask", "arn:aws:ecs:eu-west-1:" + accountID + ":task-definition/prod-hoge-dynops-runner:1", accountID, nil},
	}
	sims := make([]iamsim.Simulation, len(cells))
	for i, c := range cells {
		ctx := map[string]any{"aws:ResourceAccount": c.account}
		for k, v := range c.ctx {
			ctx[k] = v
		}
		sims[i] = iamsim.Simulation{IdentityPolicies: policies, ServiceControlPolicies: []any{}, ResourceControlPolicies: []any{},
			Request: iamsim.Request{Principal: "arn:aws:iam::" + accountID + ":role/prod-hoge-dynops-runner-task", Action: c.action,
				Resource: iamsim.Resource{Resource: c.arn, AccountID: c.account}, ContextVariables: ctx}}
	}
	// The terminal that starts runs: start_policy_json alone.
	var start any
	startJSON, ok := p.RawPlan.OutputChanges["start_policy_json"].After.(string)
	require.True(t, ok, "start_policy_json is known at plan")
	require.NoError(t, json.Unmarshal([]byte(startJSON), &start))
	taskDef := "arn:aws:ecs:eu-west-1:" + accountID + ":task-definition/prod-hoge-dynops-runner:3"
	cluster := "arn:aws:ecs:eu-west-1:" + accountID + ":cluster/prod-hoge-dynops-runner"
	taskRole := "arn:aws:iam::" + accountID + ":role/prod-hoge-dynops-runner-task"
	for _, c := range []struct {
		name, want, action, arn string
		ctx                     map[string]any
	}{
		{"start a run", iamsim.Allowed, "ecs:RunTask", taskDef, map[string]any{"ecs:cluster": cluster}},
		{"start it in another cluster", "Denied", "ecs:RunTask", taskDef, map[string]any{"ecs:cluster": "arn:aws:ecs:eu-west-1:" + accountID + ":cluster/other"}},
		{"start another task definition", "Denied", "ecs:RunTask", "arn:aws:ecs:eu-west-1:" + accountID + ":task-definition/admin:1", map[string]any{"ecs:cluster": cluster}},
		{"follow a run", iamsim.Allowed, "ecs:DescribeTasks", "arn:aws:ecs:eu-west-1:" + accountID + ":task/prod-hoge-dynops-runner/0123456789abcdef", nil},
		{"pass the task role to ECS", iamsim.Allowed, "iam:PassRole", taskRole, map[string]any{"iam:PassedToService": "ecs-tasks.amazonaws.com"}},
		{"pass the task role to Lambda", "Denied", "iam:PassRole", taskRole, map[string]any{"iam:PassedToService": "lambda.amazonaws.com"}},
		{"pass another role", "Denied", "iam:PassRole", "arn:aws:iam::" + accountID + ":role/admin", map[string]any{"iam:PassedToService": "ecs-tasks.amazonaws.com"}},
		{"read the run state", iamsim.Allowed, "s3:GetObject", state, nil},
	} {
		ctx := map[string]any{"aws:ResourceAccount": accountID}
		for k, v := range c.ctx {
			ctx[k] = v
		}
		cells = append(cells, struct {
			name, want, action, arn, account string
			ctx                              map[string]any
		}{"starter: " + c.name, c.want, c.action, c.arn, accountID, c.ctx})
		sims = append(sims, iamsim.Simulation{IdentityPolicies: []iamsim.NamedPolicy{{Name: "start", Policy: start}}, ServiceControlPolicies: []any{}, ResourceControlPolicies: []any{},
			Request: iamsim.Request{Principal: "arn:aws:iam::" + accountID + ":role/oncall", Action: c.action,
				Resource: iamsim.Resource{Resource: c.arn, AccountID: accountID}, ContextVariables: ctx}})
	}
	for i, r := range iamsim.Run(t, sims) {
		c := cells[i]
		ok := r.OverallResult == c.want || c.want == "Denied" && (r.OverallResult == iamsim.Implicit || r.OverallResult == iamsim.Explicit)
		assert.True(t, ok, "%s: %s on %s: %s, want %s %s", c.name, c.action, c.arn, r.OverallResult, c.want, r.Errors)
	}
}

// outputDocs is the task_policy_documents output of the plan.
func outputDocs(t *testing.T, p *terraform.PlanStruct) map[string]string {
	t.Helper()
	out := p.RawPlan.OutputChanges["task_policy_documents"]
	require.NotNil(t, out)
	m, ok := out.After.(map[string]any)
	require.True(t, ok, "task_policy_documents is known at plan: %v", out.After)
	docs := map[string]string{}
	for k, v := range m {
		docs[k] = v.(string)
	}
	require.Len(t, docs, 2)
	return docs
}

func TestPlanRunnerValidations_DDB_SEC_01(t *testing.T) {
	base := func(k string, v any) map[string]any {
		vars := map[string]any{"env": "prod", "product": "hoge", "account_id": accountID, "image": "dynops:v1",
			"subnet_ids": []string{"subnet-0123"}, "security_group_ids": []string{"sg-0123"}, "state_bucket": map[string]any{"name": "acme-oncall"}}
		vars[k] = v
		return vars
	}
	harness.ExpectRefusals(t, "modules/dynops-runner", []harness.Refusal{
		{Name: "image latest", Vars: base("image", "dynops:latest"), Want: []string{"DDB-SEC-01: image must be pinned"}},
		{Name: "image unpinned", Vars: base("image", "dynops"), Want: []string{"DDB-SEC-01: image must be pinned"}},
		{Name: "state prefix wildcard", Vars: base("state_bucket", map[string]any{"name": "acme-oncall", "prefix": "*"}), Want: []string{"DDB-SEC-03: state_bucket.name must be", "without wildcards"}},
		{Name: "kms alias", Vars: base("kms_key_arn", "alias/x"), Want: []string{"DDB-SEC-04: kms_key_arn must be a KMS key ARN"}},
		{Name: "account", Vars: base("account_id", "1234"), Want: []string{"DDB-SEC-03: account_id must be the 12-digit"}},
	})
}
