package citest

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
	account  = "123456789012"
	region   = "eu-west-1"
	testZone = "ZTESTZONE123"
	denied   = iamsim.Denied // either kind of deny
)

// plans: the CI role planned twice in one terraform run: with the defaults,
// and with a test zone and health checks (route53_zone_ids,
// route53_health_checks_reason).
var plans = func() *harness.PlanGroup {
	g := harness.NewPlanGroup(
		harness.PlanCase{Name: "defaults", Dir: "modules/ci-test-role", Vars: func(testing.TB) map[string]any {
			return map[string]any{"github_repository": "hoge-inc/dynops", "account_id": account}
		}},
		harness.PlanCase{Name: "route53", Dir: "modules/ci-test-role", Vars: func(testing.TB) map[string]any {
			return map[string]any{"github_repository": "hoge-inc/dynops", "account_id": account, "name": "dynops-ci-r53",
				"route53_zone_ids": []string{testZone}, "route53_health_checks_reason": "sandbox account used only by the dynops suite"}
		}},
	)
	g.Quiet = true
	return g
}()

// planned returns the suite policy and the boundary of a plan case.
func planned(t *testing.T, name string) (suite, boundary any, boundaryARN string) {
	t.Helper()
	p := plans.Plan(t, name)
	doc := func(addr string) any {
		r, ok := p.ResourcePlannedValuesMap[addr]
		require.True(t, ok, "%s: no %s in the plan", name, addr)
		var v any
		require.NoError(t, json.Unmarshal([]byte(r.AttributeValues["policy"].(string)), &v))
		return v
	}
	role := "dynops-ci-test"
	if name == "route53" {
		role = "dynops-ci-r53"
	}
	return doc("aws_iam_policy.suite"), doc("aws_iam_policy.boundary"), fmt.Sprintf("arn:aws:iam::%s:policy/%s-boundary", account, role)
}

// defaultKeyPolicy is the key policy AWS KMS gives a key created without
// one: the account decides through IAM policies.
var defaultKeyPolicy = map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
	"Sid": "Enable IAM User Permissions", "Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + account + ":root"}, "Action": "kms:*", "Resource": "*",
}}}

type probe struct {
	name, action, resource, want string
	ctx                          map[string]any
}

func run(t *testing.T, title, principal string, identity, boundary any, probes []probe) {
	t.Helper()
	sims := make([]iamsim.Simulation, len(probes))
	asked := make([]iamsim.Probe, len(probes))
	for i, p := range probes {
		asked[i] = iamsim.Probe{Name: p.name, Action: p.action, Resource: p.resource, Want: p.want, Context: p.ctx}
		sims[i] = iamsim.Simulation{
			IdentityPolicies:        []iamsim.NamedPolicy{{Name: "identity", Policy: identity}},
			ServiceControlPolicies:  []any{},
			ResourceControlPolicies: []any{},
			Request: iamsim.Request{Principal: principal, Action: p.action,
				Resource: iamsim.Resource{Resource: p.resource, AccountID: account}, ContextVariables: p.ctx},
		}
		if strings.HasPrefix(p.resource, "arn:aws:kms:") {
			// A key's policy decides first; the default one delegates to IAM
			// (the account root), so the identity policy decides.
			sims[i].ResourcePolicy = defaultKeyPolicy
		}
		if boundary != nil {
			sims[i].PermissionBoundaries = []iamsim.NamedPolicy{{Name: "boundary", Policy: boundary}}
		}
	}
	iamsim.Expect(t, title, sims, asked)
}

// TestCITestRoleCannotMakeItselfAdmin_DDB_SEC_01: every path by which the CI
// test role could widen its own rights (issue 29, High 2), asked of a real IAM
// evaluator over the planned policies: a role it creates without the
// boundary, an admin policy attached, the boundary removed or swapped, the
// created role assumed or passed to another service, its own policy or
// boundary edited, a KMS key of someone else tagged into its reach, Route 53
// zones and health checks outside the test zone. Each is denied; the
// legitimate request next to it is allowed, so the denials are not an
// accident of a policy that allows nothing.
func TestCITestRoleCannotMakeItselfAdmin_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	suite, boundary, boundaryARN := planned(t, "defaults")
	role := func(n string) string { return fmt.Sprintf("arn:aws:iam::%s:role/%s", account, n) }
	key := fmt.Sprintf("arn:aws:kms:%s:%s:key/1234abcd-12ab-34cd-56ef-1234567890ab", region, account)
	withBoundary := map[string]any{"iam:PermissionsBoundary": boundaryARN}
	me := fmt.Sprintf("arn:aws:sts::%s:assumed-role/dynops-ci-test/github", account)
	probes := []probe{
		{"CreateRole without a boundary", "iam:CreateRole", role("dev-tx-admin"), denied, nil},
		{"CreateRole with another boundary", "iam:CreateRole", role("dev-tx-admin"), denied, map[string]any{"iam:PermissionsBoundary": "arn:aws:iam::" + account + ":policy/dev-tx-wide"}},
		{"CreateRole with the boundary", "iam:CreateRole", role("dev-tx-fn"), iamsim.Allowed, withBoundary},
		{"CreateRole outside the prefix", "iam:CreateRole", role("prod-admin"), denied, withBoundary},
		{"PutRolePolicy on a role without the boundary", "iam:PutRolePolicy", role("dev-tx-old"), denied, nil},
		{"PutRolePolicy on a role with the boundary", "iam:PutRolePolicy", role("dev-tx-fn"), iamsim.Allowed, withBoundary},
		{"AttachRolePolicy AdministratorAccess", "iam:AttachRolePolicy", role("dev-tx-fn"), denied, map[string]any{"iam:PermissionsBoundary": boundaryARN, "iam:PolicyARN": "arn:aws:iam::aws:policy/AdministratorAccess"}},
		{"AttachRolePolicy IAMFullAccess", "iam:AttachRolePolicy", role("dev-tx-fn"), denied, map[string]any{"iam:PermissionsBoundary": boundaryARN, "iam:PolicyARN": "arn:aws:iam::aws:policy/IAMFullAccess"}},
		{"AttachRolePolicy a prefixed policy", "iam:AttachRolePolicy", role("dev-tx-fn"), iamsim.Allowed, map[string]any{"iam:PermissionsBoundary": boundaryARN, "iam:PolicyARN": "arn:aws:iam::" + account + ":policy/dev-tx-fn"}},
		{"AttachRolePolicy AWS Backup's service role policy", "iam:AttachRolePolicy", role("dev-tx-backup"), iamsim.Allowed, map[string]any{"iam:PermissionsBoundary": boundaryARN, "iam:PolicyARN": "arn:aws:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup"}},
		{"DeleteRolePermissionsBoundary", "iam:DeleteRolePermissionsBoundary", role("dev-tx-fn"), iamsim.Explicit, withBoundary},
		{"PutRolePermissionsBoundary to a wider one", "iam:PutRolePermissionsBoundary", role("dev-tx-fn"), denied, map[string]any{"iam:PermissionsBoundary": "arn:aws:iam::" + account + ":policy/dev-tx-wide"}},
		{"AssumeRole of a role it created", "sts:AssumeRole", role("dev-tx-fn"), iamsim.Explicit, nil},
		{"PassRole to EC2", "iam:PassRole", role("dev-tx-fn"), denied, map[string]any{"iam:PassedToService": "ec2.amazonaws.com"}},
		{"PassRole to Lambda", "iam:PassRole", role("dev-tx-fn"), iamsim.Allowed, map[string]any{"iam:PassedToService": "lambda.amazonaws.com"}},
		{"CreatePolicyVersion of the boundary", "iam:CreatePolicyVersion", boundaryARN, iamsim.Explicit, nil},
		{"CreatePolicyVersion of its own policy", "iam:CreatePolicyVersion", "arn:aws:iam::" + account + ":policy/dynops-ci-test", iamsim.Explicit, nil},
		{"PutRolePolicy on its own role", "iam:PutRolePolicy", role("dynops-ci-test"), iamsim.Explicit, withBoundary},
		{"UpdateAssumeRolePolicy of its own role", "iam:UpdateAssumeRolePolicy", role("dynops-ci-test"), iamsim.Explicit, nil},
		{"CreateKey tagged with the prefix", "kms:CreateKey", "*", iamsim.Allowed, map[string]any{"aws:RequestTag/Name": "dev-tx-topic", "aws:TagKeys": []string{"Name"}}},
		{"CreateKey's tags (TagResource on *)", "kms:TagResource", "*", iamsim.Allowed, map[string]any{"aws:RequestTag/Name": "dev-tx-topic", "aws:TagKeys": []string{"Name"}}},
		{"TagResource on an existing key", "kms:TagResource", key, iamsim.Explicit, map[string]any{"aws:RequestTag/Name": "dev-tx-mine", "aws:TagKeys": []string{"Name"}, "aws:ResourceTag/Name": "prod-payments"}},
		{"TagResource on an untagged key", "kms:TagResource", key, iamsim.Explicit, map[string]any{"aws:RequestTag/Name": "dev-tx-mine", "aws:TagKeys": []string{"Name"}}},
		{"PutKeyPolicy on someone else's key", "kms:PutKeyPolicy", key, denied, map[string]any{"aws:ResourceTag/Name": "prod-payments"}},
		{"ScheduleKeyDeletion on an untagged key", "kms:ScheduleKeyDeletion", key, denied, nil},
		{"PutKeyPolicy on a key it created", "kms:PutKeyPolicy", key, iamsim.Allowed, map[string]any{"aws:ResourceTag/Name": "dev-tx-topic"}},
		{"ChangeResourceRecordSets without test zones", "route53:ChangeResourceRecordSets", "arn:aws:route53:::hostedzone/ZPRODZONE1", denied, map[string]any{"route53:ChangeResourceRecordSetsNormalizedRecordNames": []string{"dev-tx.example.internal"}}},
		{"DeleteHostedZone", "route53:DeleteHostedZone", "arn:aws:route53:::hostedzone/ZPRODZONE1", denied, nil},
		{"CreateHostedZone", "route53:CreateHostedZone", "*", denied, nil},
		{"UpdateHealthCheck without a reason", "route53:UpdateHealthCheck", "arn:aws:route53:::healthcheck/abcdef01-2345-6789-abcd-ef0123456789", denied, nil},
		{"DeleteTable outside the prefix", "dynamodb:DeleteTable", fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/prod-payments-order", region, account), denied, nil},
		{"DeleteTable of a test table", "dynamodb:DeleteTable", fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/dev-tx-order", region, account), iamsim.Allowed, nil},
	}
	run(t, "the CI test role (defaults) against every path to admin", me, suite, nil, probes)

	// A role the suite created, with the boundary and the widest policy the
	// suite could attach (everything): what a function under test could do.
	admin := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"}}}
	created := fmt.Sprintf("arn:aws:sts::%s:assumed-role/dev-tx-fn/lambda", account)
	run(t, "a role the suite created: the boundary, with an allow-everything policy attached", created, admin, boundary, []probe{
		{"iam:CreateUser", "iam:CreateUser", "arn:aws:iam::" + account + ":user/backdoor", iamsim.Explicit, nil},
		{"iam:AttachRolePolicy to the CI role", "iam:AttachRolePolicy", role("dynops-ci-test"), iamsim.Explicit, nil},
		{"sts:AssumeRole of any role", "sts:AssumeRole", role("OrganizationAccountAccessRole"), iamsim.Explicit, nil},
		{"dynamodb:DeleteTable outside the prefix", "dynamodb:DeleteTable", fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/prod-payments-order", region, account), denied, nil},
		{"s3:GetObject outside the prefix", "s3:GetObject", "arn:aws:s3:::prod-payments-exports/AWSDynamoDB/data.json.gz", denied, nil},
		{"kms:Decrypt with someone else's key", "kms:Decrypt", key, denied, map[string]any{"aws:ResourceTag/Name": "prod-payments"}},
		{"kms:Decrypt with a key of the tests", "kms:Decrypt", key, iamsim.Allowed, map[string]any{"aws:ResourceTag/Name": "dev-tx-topic"}},
		{"lambda:UpdateFunctionCode of a test function", "lambda:UpdateFunctionCode", fmt.Sprintf("arn:aws:lambda:%s:%s:function:dev-tx-consumer", region, account), denied, nil},
		{"dynamodb:PutItem on a test table", "dynamodb:PutItem", fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/dev-tx-order", region, account), iamsim.Allowed, nil},
		{"sqs:SendMessage to a test queue", "sqs:SendMessage", fmt.Sprintf("arn:aws:sqs:%s:%s:dev-tx-dlq", region, account), iamsim.Allowed, nil},
	})

	// With a test zone and a reason for health checks: records of the test
	// zone named with the prefix, nothing in other zones.
	suite53, _, _ := planned(t, "route53")
	zone := "arn:aws:route53:::hostedzone/" + testZone
	run(t, "the CI test role with route53_zone_ids and a health-check reason", fmt.Sprintf("arn:aws:sts::%s:assumed-role/dynops-ci-r53/github", account), suite53, nil, []probe{
		{"records named with the prefix in the test zone", "route53:ChangeResourceRecordSets", zone, iamsim.Allowed, map[string]any{"route53:ChangeResourceRecordSetsNormalizedRecordNames": []string{"api.dev-tx.example.internal"}}},
		{"a record without the prefix in the test zone", "route53:ChangeResourceRecordSets", zone, denied, map[string]any{"route53:ChangeResourceRecordSetsNormalizedRecordNames": []string{"api.prod.example.com"}}},
		{"records in another zone", "route53:ChangeResourceRecordSets", "arn:aws:route53:::hostedzone/ZPRODZONE1", denied, map[string]any{"route53:ChangeResourceRecordSetsNormalizedRecordNames": []string{"dev-tx.example.internal"}}},
		{"DeleteHostedZone of the test zone", "route53:DeleteHostedZone", zone, denied, nil},
		{"UpdateHealthCheck with the reason given", "route53:UpdateHealthCheck", "arn:aws:route53:::healthcheck/abcdef01-2345-6789-abcd-ef0123456789", iamsim.Allowed, nil},
	})
}

// TestCITestRoleTrustNamesTheWorkflow_DDB_SEC_01: the OIDC trust binds the
// token's job_workflow_ref (the workflow file and ref) besides its sub.
func TestCITestRoleTrustNamesTheWorkflow_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	p := plans.Plan(t, "defaults")
	var trust struct{ Statement []statement }
	require.NoError(t, json.Unmarshal([]byte(p.ResourcePlannedValuesMap["aws_iam_role.this"].AttributeValues["assume_role_policy"].(string)), &trust))
	require.Len(t, trust.Statement, 1)
	eq := trust.Statement[0].Condition["StringEquals"]
	assert.Equal(t, []string{"hoge-inc/dynops/.github/workflows/test-aws.yml@refs/heads/main"}, list(eq["token.actions.githubusercontent.com:job_workflow_ref"]))
	assert.Equal(t, []string{"repo:hoge-inc/dynops:environment:aws-sandbox"}, list(eq["token.actions.githubusercontent.com:sub"]))
}
