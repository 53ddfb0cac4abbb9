package table

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/policies"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestResourcePolicyKeepsFence (DDB-DR-02): a table whose resource policy
// Terraform manages (resource_policy) is fenced the way `dynops migrate
// cutover` fences a source (failover.FenceTable, the production path, over
// HTTP to the target); the next terraform plan reads the fence back and
// would write the module's policy without it, and the policy gate (the Rego
// conftest runs on that plan) refuses the plan, naming the fence. Before the
// fence the same root plans clean.
func TestResourcePolicyKeepsFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	vars := map[string]any{"env": "dev", "product": harness.UniqueID(), "account_id": target.AccountID(t)}
	if target.OnEmulator() {
		vars["contributor_insights_enabled"] = false // moto: 500 Not Implemented
	}
	opts := target.ApplyProtected(t, filepath.Join("policies", "testdata", "fenced-table"), vars)
	opts.PlanFilePath = filepath.Join(t.TempDir(), "plan.out")
	opts.Logger = logger.Discard // the plans' JSON; the assertions say what matters
	tableARN := terraform.Output(t, opts, "table_arn")
	gate, err := policies.New(ctx)
	require.NoError(t, err)
	// fenceDenies is what the gate says of a plan (its JSON) about fences.
	fenceDenies := func(t *testing.T, plan string) []string {
		t.Helper()
		msgs, err := gate.Deny(ctx, []byte(plan))
		require.NoError(t, err)
		var out []string
		for _, m := range msgs {
			if strings.HasPrefix(m, "DDB-DR-02: ") {
				out = append(out, m)
			}
		}
		return out
	}
	require.Empty(t, fenceDenies(t, terraform.InitAndPlanAndShow(t, opts)), "no fence yet: the plan keeps the policy")

	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	_, err = failover.FenceTable(ctx, db, tableARN, "")
	require.NoError(t, err)
	live, _, err := failover.ResourcePolicy(ctx, db, tableARN)
	require.NoError(t, err)
	require.True(t, failover.HasOwnFence(live, failover.OwnerMigrate), "the fence is on the live policy: %s", live)

	plan := terraform.InitAndPlanAndShow(t, opts)
	var p struct {
		ResourceChanges []struct {
			Type   string `json:"type"`
			Change struct {
				Actions []string `json:"actions"`
				After   struct {
					Policy string `json:"policy"`
				} `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	require.NoError(t, json.Unmarshal([]byte(plan), &p))
	updates := 0
	for _, rc := range p.ResourceChanges {
		if rc.Type == "aws_dynamodb_resource_policy" && !slices.Equal(rc.Change.Actions, []string{"no-op"}) {
			updates++
			assert.False(t, failover.HasOwnFence(rc.Change.After.Policy, failover.OwnerMigrate), "terraform's policy has no fence: the apply would lift it")
		}
	}
	require.Equal(t, 1, updates, "terraform plans to write the module's policy over the fenced one")

	denies := fenceDenies(t, plan) // the same plan: the gate reads what terraform would write
	require.Len(t, denies, 1)
	assert.Contains(t, denies[0], `removes the write fence "`+failover.MigrateFenceSid+`" from `+tableARN)
	assert.Contains(t, denies[0], "dynops migrate rollback")
}
