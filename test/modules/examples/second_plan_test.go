package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// example is one root under modules/*/examples: the variables it needs on
// the target, or why the emulator cannot hold it.
type example struct {
	dir string
	// vars: product is a unique name (every example has its own tables
	// in the one emulator) and account the target's account ID.
	vars func(product, account, zip string) map[string]any
	// emulatorLacks, when set, skips the example on the emulator: what
	// moto cannot do. The real-AWS run applies it.
	emulatorLacks string
}

// examples lists every example of modules/; TestEveryExampleIsListed fails
// when one is added without an entry here.
var examples = []example{
	{dir: "modules/alarm-topic/examples/basic", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a}
	}},
	{dir: "modules/ci-test-role/examples/github", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a}
	}},
	{dir: "modules/cloudtrail-data-events/examples/complete", emulatorLacks: "CloudTrail StartLogging (moto answers 500)"},
	{dir: "modules/dr/examples/two-region", vars: func(p, a, _ string) map[string]any {
		// The pointer, the failover role and the Route 53 records; moto
		// answers CreateBackupSelection 500, so the plan has no selection.
		return map[string]any{"account_id": a, "env": "dev", "global_tables": []string{"dev-" + p + "-session"},
			"regional_tables": []string{"dev-" + p + "-user"}, "backup_selection_enabled": false}
	}},
	{dir: "modules/dynops-runner/examples/complete", emulatorLacks: "running its awsvpc (Fargate) task, the point of applying it (moto 5.2.1 answers RunTask 500); its plan and evaluator cells run offline in test/modules/runner"},
	{dir: "modules/dynamodb-access/examples/complete", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a, "product": p}
	}},
	{dir: "modules/dynamodb-alarms/examples/basic", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynamodb-export/examples/scheduled", vars: func(p, a, zip string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "scheduler_zip_path": zip, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynamodb-readiness/examples/daily", vars: func(p, a, zip string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "readiness_zip_path": zip, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynamodb-stack/examples/migration", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynamodb-table-replica/examples/two-region", emulatorLacks: "replicas (a replica's creation never completes)"},
	{dir: "modules/dynamodb-table/examples/basic", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynamodb-table/examples/global-table", emulatorLacks: "replicas (a replica's creation never completes)"},
	{dir: "modules/dynamodb-table/examples/multi-tenant", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"product": p, "contributor_insights_enabled": false}
	}},
	{dir: "modules/dynops-batch/examples/complete", emulatorLacks: "a managed Fargate compute environment (moto 5.2.1 asks for a service role AWS does not need and looks the subnets and security groups up in its own EC2)"},
	{dir: "modules/dynamodb-vpc-endpoint/examples/complete", vars: func(p, a, _ string) map[string]any {
		return map[string]any{"env": "dev"}
	}},
	{dir: "modules/stream-consumer/examples/go-consumer", vars: func(p, a, zip string) map[string]any {
		return map[string]any{"account_id": a, "product": p, "filename": zip, "contributor_insights_enabled": false}
	}},
}

// TestEveryExampleIsListed keeps the suite in step with modules/: a new
// example must say how it applies, or what the emulator lacks for it.
func TestEveryExampleIsListed(t *testing.T) {
	found, err := filepath.Glob(filepath.Join(harness.RepoRoot(), "modules", "*", "examples", "*"))
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, e := range examples {
		listed[e.dir] = true
	}
	for _, f := range found {
		rel, err := filepath.Rel(harness.RepoRoot(), f)
		require.NoError(t, err)
		if strings.HasSuffix(rel, ".md") {
			continue
		}
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s is not in test/modules/examples: add it to examples (its variables, or what the emulator lacks)", rel)
		}
		delete(listed, filepath.ToSlash(rel))
	}
	for dir := range listed {
		t.Errorf("examples lists %s, which is not under modules/", dir)
	}
}

// TestEveryExampleSecondPlanIsEmpty applies each example and plans it again:
// the plan must have no changes (terraform plan -detailed-exitcode 0). On a
// failure the second plan is printed. The basic table and alarms examples
// and envs/local also have their empty second plan in make test
// (test/modules/table, test/modules/alarms, test/modules/envs).
func TestEveryExampleSecondPlanIsEmpty(t *testing.T) {
	harness.Long(t, "every module example applied and planned again (about 5 CPU-min of terraform)")
	zip := harness.PlanZip(t)
	account := target.AccountID(t)
	for _, e := range examples {
		t.Run(strings.TrimPrefix(e.dir, "modules/"), func(t *testing.T) {
			if e.emulatorLacks != "" && target.OnEmulator() {
				t.Skipf("the emulator lacks %s; the real-AWS run (DYNOPS_TEST_TARGET=aws) applies it", e.emulatorLacks)
			}
			t.Parallel()
			vars := map[string]any{}
			if e.vars != nil {
				vars = e.vars(harness.UniqueID(), account, zip)
			}
			opts := target.Options(t, e.dir, vars)
			// On AWS: the two-step delete where the root takes deletion protection (DDB-PROT-01).
			target.Teardown(t, opts, hasVariable(t, e.dir, "deletion_protection_enabled"))
			terraform.InitAndApply(t, opts)
			opts.PlanFilePath = filepath.Join(t.TempDir(), "second.plan")
			plan := terraform.InitAndPlanAndShowWithStruct(t, opts)
			for _, rc := range plan.RawPlan.ResourceChanges {
				if rc.Change == nil || rc.Change.Actions.NoOp() || rc.Change.Actions.Read() {
					continue
				}
				if why := emulatorDrift(rc); why != "" && target.OnEmulator() {
					t.Logf("%s: %s shows a change the emulator causes: %s", e.dir, rc.Address, why)
					continue
				}
				t.Errorf("%s: the second plan would %v %s:\n%s", e.dir, rc.Change.Actions, rc.Address, diff(rc))
			}
		})
	}
}

// emulatorDrift says why a change in a second plan is the emulator's, not
// the module's: only an in-place update of tags on a resource type whose
// tags the provider cannot read back from moto (measured: moto 5.2.1 keeps
// Backup tags for boto3's ListTags, yet terraform-provider-aws 5.100.0 reads
// none back from it for backup plans and vaults). "" when the change is real.
func emulatorDrift(rc *tfjson.ResourceChange) string {
	noTags := map[string]bool{"aws_backup_plan": true, "aws_backup_vault": true}
	if !noTags[rc.Type] || !rc.Change.Actions.Update() {
		return ""
	}
	before, _ := rc.Change.Before.(map[string]any)
	after, _ := rc.Change.After.(map[string]any)
	for k := range after {
		if k != "tags" && k != "tags_all" && !reflect.DeepEqual(before[k], after[k]) {
			return ""
		}
	}
	return "tags the provider reads back empty from moto's Backup API"
}

// diff prints the attributes a change would set, before and after.
func diff(rc *tfjson.ResourceChange) string {
	before, _ := rc.Change.Before.(map[string]any)
	after, _ := rc.Change.After.(map[string]any)
	var b strings.Builder
	for k, v := range after {
		if !reflect.DeepEqual(before[k], v) {
			was, _ := json.Marshal(before[k])
			now, _ := json.Marshal(v)
			b.WriteString("  " + k + ": " + string(was) + " -> " + string(now) + "\n")
		}
	}
	return b.String()
}

// hasVariable tells whether the root at dir declares variable name.
func hasVariable(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot(), dir, "*.tf"))
	require.NoError(t, err)
	re := regexp.MustCompile(`(?m)^variable\s+"` + regexp.QuoteMeta(name) + `"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if re.Match(b) {
			return true
		}
	}
	return false
}
