package access

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestApplyModule applies modules/dynamodb-access with roles on the target
// and reads the policies and roles back from IAM: the documents IAM stores
// are the planned ones, and the tenant role's trust requires the tag. (The
// emulator stores IAM documents but does not evaluate conditions; the
// isolation itself is proven by TestTenantIsolation_DDB_SEC_02.)
func TestApplyModule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	product := harness.UniqueID()
	acct := accountID
	if !target.OnEmulator() {
		acct = callerAccount(t)
	}
	opts := target.Options(t, module, map[string]any{
		"env": "dev", "product": product, "account_id": acct,
		"application_tables":          []string{"dev-" + product + "-user"},
		"tenant_tables":               map[string]any{"dev-" + product + "-order": map[string]any{"key_prefix": "TENANT#", "index_key_delimiter": "#"}},
		"create_roles":                true,
		"trusted_principal_arns":      []string{"arn:aws:iam::" + acct + ":root"},
		"role_trusted_principal_arns": map[string]any{"tenant": []string{"arn:aws:iam::" + acct + ":role/dev-" + product + "-tenant-api"}},
		"account_root_trust_reason":   "the emulator's account: every caller of the test",
	})
	target.Teardown(t, opts, false)
	terraform.InitAndApply(t, opts)

	var docs, roleNames map[string]string
	terraform.OutputStruct(t, opts, "policy_documents", &docs)
	terraform.OutputStruct(t, opts, "role_names", &roleNames)
	var policyARNs map[string]string
	terraform.OutputStruct(t, opts, "policy_arns", &policyARNs)
	require.Len(t, roleNames, 6) // application, tenant, investigator, data-patch, dynops-operator, dynops-break-glass

	client := iam.NewFromConfig(target.AWSConfig(t))
	for role, arn := range policyARNs {
		t.Run(role+" policy stored as planned", func(t *testing.T) {
			p, err := client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: &arn})
			require.NoError(t, err)
			v, err := client.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: &arn, VersionId: p.Policy.DefaultVersionId})
			require.NoError(t, err)
			assert.JSONEq(t, docs[role], unescape(t, *v.PolicyVersion.Document))
		})
		t.Run(role+" role has the policy", func(t *testing.T) {
			name := roleNames[role]
			out, err := client.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: &name})
			require.NoError(t, err)
			require.Len(t, out.AttachedPolicies, 1)
			assert.Equal(t, arn, *out.AttachedPolicies[0].PolicyArn)
		})
	}
	t.Run("DDB-SEC-02 tenant role trust needs the tenant tag", func(t *testing.T) {
		name := roleNames["tenant"]
		r, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: &name})
		require.NoError(t, err)
		var trust Policy
		require.NoError(t, json.Unmarshal([]byte(unescape(t, *r.Role.AssumeRolePolicyDocument)), &trust))
		require.Len(t, trust.Statement, 1)
		assert.ElementsMatch(t, []string{"sts:AssumeRole", "sts:TagSession"}, trust.Statement[0].Action)
		assert.Equal(t, map[string]any{"aws:RequestTag/tenant_id": "false"}, trust.Statement[0].Condition["Null"])
	})
}

// unescape decodes a policy document as IAM returns it (URL-encoded on AWS).
func unescape(t *testing.T, doc string) string {
	t.Helper()
	s, err := url.QueryUnescape(doc)
	require.NoError(t, err)
	return s
}

// callerAccount is the account of the ambient credentials (real AWS only).
func callerAccount(t *testing.T) string {
	t.Helper()
	out, err := sts.NewFromConfig(target.AWSConfig(t)).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	require.NoError(t, err)
	return *out.Account
}
