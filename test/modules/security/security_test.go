package security

import (
	"encoding/json"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

const (
	endpointExample = "modules/dynamodb-vpc-endpoint/examples/complete"
	trailExample    = "modules/cloudtrail-data-events/examples/complete"
)

// plans are the two examples' offline plans, planned together in one
// terraform run (harness.PlanGroup), by example folder.
var plans = func() *harness.PlanGroup {
	g := harness.NewPlanGroup(
		harness.PlanCase{Name: endpointExample, Dir: endpointExample, Vars: func(testing.TB) map[string]any { return nil }},
		harness.PlanCase{Name: trailExample, Dir: trailExample, Vars: func(testing.TB) map[string]any { return nil }},
	)
	g.Quiet = true
	return g
}()

// planned returns the planned resources of the example at dir by address.
func planned(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	p := plans.Plan(t, dir)
	out := map[string]map[string]any{}
	for addr, r := range p.ResourcePlannedValuesMap {
		out[addr] = r.AttributeValues
	}
	return out
}

// TestPlanVPCEndpoint_DDB_SEC_05: a Gateway endpoint for DynamoDB on the
// given route tables, with no endpoint policy.
func TestPlanVPCEndpoint_DDB_SEC_05(t *testing.T) {
	t.Parallel()
	got := planned(t, endpointExample)
	ep, ok := got["module.dynamodb_endpoint.aws_vpc_endpoint.dynamodb"]
	require.True(t, ok, "no endpoint in the plan")
	assert.Equal(t, "Gateway", ep["vpc_endpoint_type"])
	assert.Equal(t, "com.amazonaws."+harness.DefaultRegion+".dynamodb", ep["service_name"])
	assert.Nil(t, ep["policy"], "DDB-SEC-05: no endpoint policy (control stays in IAM)")
}

// TestPlanVPCEndpointValidations_DDB_SEC_05: bad network inputs fail the plan naming the rule.
func TestPlanVPCEndpointValidations_DDB_SEC_05(t *testing.T) {
	t.Parallel()
	vpc := func(over map[string]any) map[string]any {
		v := map[string]any{"env": "dev", "vpc_id": "vpc-0123456789abcdef0", "route_table_ids": []string{"rtb-0123456789abcdef0"}}
		for k, x := range over {
			v[k] = x
		}
		return v
	}
	harness.ExpectRefusals(t, "modules/dynamodb-vpc-endpoint", []harness.Refusal{
		{Name: "DDB-SEC-05 no route tables", Vars: vpc(map[string]any{"route_table_ids": []string{}}), Want: []string{"DDB-SEC-05: route_table_ids must list at least one route table ID", "no traffic uses the endpoint"}},
		{Name: "DDB-SEC-05 not a route table", Vars: vpc(map[string]any{"route_table_ids": []string{"subnet-0123"}}), Want: []string{"DDB-SEC-05: route_table_ids must list at least one route table ID"}},
		{Name: "DDB-SEC-05 not a VPC", Vars: vpc(map[string]any{"vpc_id": "subnet-0123"}), Want: []string{"DDB-SEC-05: vpc_id must be a VPC ID (vpc-0123456789abcdef0)"}},
		{Name: "DDB-NAME-01 env not lower case", Vars: vpc(map[string]any{"env": "Prod"}), Want: []string{"DDB-NAME-01: env must be lower case letters and digits"}},
	})
}

// TestPlanCloudTrailValidations_DDB_SEC_06: every validation message of
// modules/cloudtrail-data-events, with its rule and its fix.
func TestPlanCloudTrailValidations_DDB_SEC_06(t *testing.T) {
	t.Parallel()
	trail := func(over map[string]any) map[string]any {
		v := map[string]any{"env": "dev", "account_id": "123456789012"}
		for k, x := range over {
			v[k] = x
		}
		return v
	}
	harness.ExpectRefusals(t, "modules/cloudtrail-data-events", []harness.Refusal{
		{Name: "DDB-NAME-01 env not lower case", Vars: trail(map[string]any{"env": "dev-1"}), Want: []string{"DDB-NAME-01: env must be lower case letters and digits"}},
		{Name: "DDB-SEC-06 account id", Vars: trail(map[string]any{"account_id": "1234"}), Want: []string{"DDB-SEC-06: account_id must be the 12-digit AWS account ID"}},
		{Name: "DDB-SEC-04 KMS key not an ARN", Vars: trail(map[string]any{"kms_key_arn": "alias/trail"}), Want: []string{"DDB-SEC-04: kms_key_arn must be a KMS key ARN", "null for SSE-S3"}},
		{Name: "DDB-SEC-06 retention under a quarter", Vars: trail(map[string]any{"retention_days": 30}), Want: []string{"DDB-SEC-06: retention_days must be at least 90", "investigation looks back"}},
	})
}

// TestPlanCloudTrail_DDB_SEC_06: management events and every DynamoDB table
// and stream data event, with no filter but the resource type; the bucket
// is written only by this trail, over TLS.
func TestPlanCloudTrail_DDB_SEC_06(t *testing.T) {
	t.Parallel()
	got := planned(t, trailExample)
	trail, ok := got["module.trail.aws_cloudtrail.this"]
	require.True(t, ok, "no trail in the plan")
	assert.Equal(t, true, trail["is_multi_region_trail"])
	assert.Equal(t, true, trail["enable_log_file_validation"])
	types := map[string]bool{}
	management := false
	for _, s := range trail["advanced_event_selector"].([]any) {
		fields := map[string][]any{}
		for _, f := range s.(map[string]any)["field_selector"].([]any) {
			fm := f.(map[string]any)
			fields[fm["field"].(string)] = fm["equals"].([]any)
		}
		for f := range fields {
			assert.Contains(t, []string{"eventCategory", "resources.type"}, f, "DDB-SEC-06: no filter but category and type (filter downstream)")
		}
		if len(fields["resources.type"]) == 1 {
			types[fields["resources.type"][0].(string)] = true
		} else if fields["eventCategory"][0] == "Management" {
			management = true
		}
	}
	assert.True(t, management, "management events recorded")
	assert.Equal(t, map[string]bool{"AWS::DynamoDB::Table": true, "AWS::DynamoDB::Stream": true}, types)

	var bucket struct {
		Statement []struct {
			Sid       string
			Effect    string
			Condition map[string]map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(got["module.trail.aws_s3_bucket_policy.trail"]["policy"].(string)), &bucket))
	sids := map[string]bool{}
	for _, s := range bucket.Statement {
		sids[s.Sid] = true
		if s.Effect == "Allow" {
			assert.Contains(t, s.Condition["StringEquals"], "aws:SourceArn", "%s: only this trail writes", s.Sid)
		}
	}
	assert.True(t, sids["TLSOnly"])
}

// refreshed applies root, then refreshes its state from the service
// (`apply -refresh-only`: the provider reads every resource back) and
// returns each resource's attributes as read, by address.
func refreshed(t *testing.T, opts *terraform.Options) map[string]map[string]any {
	t.Helper()
	terraform.InitAndApply(t, opts)
	terraform.RunTerraformCommand(t, opts, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color")
	out := terraform.RunTerraformCommand(t, opts, "show", "-json", "-no-color")
	var st struct {
		Values struct {
			RootModule module `json:"root_module"`
		} `json:"values"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	got := map[string]map[string]any{}
	var walk func(m module)
	walk = func(m module) {
		for _, r := range m.Resources {
			got[r.Address] = r.Values
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(st.Values.RootModule)
	return got
}

type module struct {
	Resources []struct {
		Address string         `json:"address"`
		Values  map[string]any `json:"values"`
	} `json:"resources"`
	ChildModules []module `json:"child_modules"`
}

// TestApplyVPCEndpoint_DDB_SEC_05 applies the example and reads the endpoint
// back from EC2 (a refresh): a Gateway endpoint on the route table.
func TestApplyVPCEndpoint_DDB_SEC_05(t *testing.T) {
	t.Parallel()
	opts := target.Options(t, endpointExample, map[string]any{"env": "dev", "region": target.Region})
	target.Teardown(t, opts, false)
	got := refreshed(t, opts)
	ep, ok := got["module.dynamodb_endpoint.aws_vpc_endpoint.dynamodb"]
	require.True(t, ok, "the endpoint is not in the refreshed state")
	assert.Equal(t, "Gateway", ep["vpc_endpoint_type"])
	assert.Equal(t, "com.amazonaws."+target.Region+".dynamodb", ep["service_name"])
	assert.Len(t, ep["route_table_ids"], 1)
}

// TestApplyCloudTrail_DDB_SEC_06 applies the example and reads the trail and
// its event selectors back from CloudTrail (a refresh).
func TestApplyCloudTrail_DDB_SEC_06(t *testing.T) {
	t.Parallel()
	target.RequireAWS(t, "answers CloudTrail StartLogging with HTTP 500 (measured: the trail is created, the provider's StartLogging fails); the plan and the policies are tested offline (TestPlanCloudTrail_DDB_SEC_06)")
	acct := target.AccountID(t)
	opts := target.Options(t, trailExample, map[string]any{"env": harness.UniqueID(), "region": target.Region, "account_id": acct, "force_destroy": true})
	target.Teardown(t, opts, false)
	got := refreshed(t, opts)
	trail, ok := got["module.trail.aws_cloudtrail.this"]
	require.True(t, ok, "the trail is not in the refreshed state")
	types := map[string]bool{}
	for _, s := range trail["advanced_event_selector"].([]any) {
		for _, f := range s.(map[string]any)["field_selector"].([]any) {
			fm := f.(map[string]any)
			if fm["field"] == "resources.type" {
				for _, v := range fm["equals"].([]any) {
					types[v.(string)] = true
				}
			}
		}
	}
	assert.Equal(t, map[string]bool{"AWS::DynamoDB::Table": true, "AWS::DynamoDB::Stream": true}, types, "read back from CloudTrail")
}
