package table

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/adopt"
	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/test/helpers/harness"
)

// waitActive waits until the table and its indexes are ACTIVE after an UpdateTable.
func waitActive(t *testing.T, db *dynamodb.Client, name string) *types.TableDescription {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		d := describe(t, db, name)
		ready := d.TableStatus == types.TableStatusActive
		for _, g := range d.GlobalSecondaryIndexes {
			ready = ready && g.IndexStatus == types.IndexStatusActive
		}
		if ready {
			return d
		}
		require.True(t, time.Now().Before(deadline), "table %s not ACTIVE after 5 minutes", name)
		time.Sleep(2 * time.Second)
	}
}

func gsiCapacity(d *types.TableDescription) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.ProvisionedThroughput != nil {
			out[aws.ToString(g.IndexName)] = [2]int64{aws.ToInt64(g.ProvisionedThroughput.ReadCapacityUnits), aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits)}
		}
	}
	return out
}

// requireEmptyPlan requires the next plan to change nothing. On the emulator
// it accepts exactly two of moto's differences from AWS, each checked, and
// nothing else (README support table):
//   - moto keeps a dropped index's attribute definition (AWS prunes it): the
//     plan may remove attribute definitions that no key of the table uses;
//   - moto keeps the provisioned throughput of a table switched to on-demand
//     (AWS reports 0): on a PAY_PER_REQUEST table the plan may set the table's
//     capacity to 0 and GSIs may differ in their read/write capacity only.
func requireEmptyPlan(t *testing.T, opts *terraform.Options, what string) {
	t.Helper()
	if !target.OnEmulator() {
		require.Equal(t, 0, terraform.PlanExitCode(t, opts), "%s: the next plan must be empty", what)
		return
	}
	o := *opts
	o.PlanFilePath = filepath.Join(t.TempDir(), "plan.out")
	if terraform.PlanExitCode(t, &o) == 0 {
		return // empty: no show needed (each terraform run costs ~10 CPU-seconds)
	}
	p := terraform.ShowWithStruct(t, &o)
	for addr, rc := range p.ResourceChangesMap {
		if rc.Change.Actions.NoOp() || rc.Change.Actions.Read() {
			continue
		}
		require.Equal(t, "aws_dynamodb_table.this", addr, "%s: only the table may change (moto's leftovers), not %s: %v", what, addr, rc.Change.Actions)
		require.True(t, rc.Change.Actions.Update(), "%s: the table may only be updated in place: %v", what, rc.Change.Actions)
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		onDemand := after["billing_mode"] == "PAY_PER_REQUEST"
		for k := range after {
			bj, _ := json.Marshal(before[k])
			aj, _ := json.Marshal(after[k])
			if string(bj) == string(aj) {
				continue
			}
			switch {
			case k == "attribute":
				keys := keyAttributes(after)
				kept := map[string]bool{}
				for _, a := range asList(after[k]) {
					kept[a["name"].(string)] = true
				}
				for _, a := range asList(before[k]) {
					n := a["name"].(string)
					assert.True(t, kept[n] || !keys[n], "%s: attribute %s changes; only an unused definition moto kept may be removed", what, n)
				}
				for n := range kept {
					assert.Contains(t, string(bj), `"name":"`+n+`"`, "%s: attribute %s would be added", what, n)
				}
			case onDemand && (k == "read_capacity" || k == "write_capacity"):
				assert.EqualValues(t, 0, after[k], "%s: on-demand %s is planned to 0 (moto kept %v)", what, k, before[k])
			case onDemand && k == "global_secondary_index":
				assert.JSONEq(t, string(withoutCapacity(before[k])), string(withoutCapacity(after[k])), "%s: a GSI changes in more than the capacity moto kept", what)
			default:
				assert.JSONEq(t, string(bj), string(aj), "%s: %s changes", what, k)
			}
		}
	}
}

func asList(v any) []map[string]any {
	var out []map[string]any
	l, _ := v.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// keyAttributes: the attributes a planned table's keys and GSI keys use.
func keyAttributes(table map[string]any) map[string]bool {
	keys := map[string]bool{}
	add := func(m map[string]any) {
		for _, k := range []string{"hash_key", "range_key"} {
			if n, ok := m[k].(string); ok && n != "" {
				keys[n] = true
			}
		}
	}
	add(table)
	for _, g := range asList(table["global_secondary_index"]) {
		add(g)
	}
	for _, l := range asList(table["local_secondary_index"]) {
		add(l)
	}
	return keys
}

// withoutCapacity: GSIs without their read/write capacity, sorted by name.
func withoutCapacity(v any) []byte {
	byName := map[string]map[string]any{}
	for _, g := range asList(v) {
		c := maps.Clone(g)
		delete(c, "read_capacity")
		delete(c, "write_capacity")
		byName[fmt.Sprint(c["name"])] = c
	}
	b, _ := json.Marshal(byName)
	return b
}

// TestDay2: a table's first weeks, the way a team changes it, with an empty
// plan after every step where one is due (issue 14). One init, one working
// directory. On the emulator, auto scaling targets cannot be applied (moto:
// 500 on their tags), so PROVISIONED steps apply and plan the table only
// (-target); on AWS (DYNOPS_TEST_TARGET=aws) everything is applied.
func TestDay2(t *testing.T) {
	harness.Long(t, "a table's first weeks, 11 applies each with its empty plan (about 350 CPU-s of terraform); TestDay2KeyChangesRefused_DDB_IDX_01 and TestApplyBasicExample's empty second plan run in make test")
	t.Parallel() // its own tables: it runs beside the package's other tests
	ctx := context.Background()
	vars := map[string]any{
		"env": "dev", "product": harness.UniqueID(), "usage": "user",
		"hash_key":   "user_id",
		"attributes": []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}},
		"global_secondary_indexes": []map[string]any{
			{"name": "gsi1", "hash_key": "email", "non_key_attributes": []string{"display_name"}},
		},
		"contributor_insights_enabled": !target.OnEmulator(),
	}
	opts := target.ApplyProtected(t, module, vars)
	name := tableName(vars)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	step := func(what string, change func()) {
		t.Helper()
		change()
		t.Run(what, func(t *testing.T) {
			terraform.Apply(t, opts)
			requireEmptyPlan(t, opts, what)
		})
	}
	requireEmptyPlan(t, opts, "first apply")

	step("tags added", func() { vars["tags"] = map[string]any{"team": "payments", "cost-center": "cc-42"} })
	assert.Equal(t, "payments", tableTags(t, db, name)["team"])

	// DDB-NAME-02/IDX: changing an index is add gsiN+1, move readers, drop the old one.
	vars["attributes"] = []map[string]any{{"name": "user_id", "type": "S"}, {"name": "email", "type": "S"}, {"name": "country", "type": "S"}}
	vars["global_secondary_indexes"] = []map[string]any{
		{"name": "gsi1", "hash_key": "email", "non_key_attributes": []string{"display_name"}},
		{"name": "gsi2", "hash_key": "country", "projection_type": "KEYS_ONLY"},
	}
	// Adding a GSI plans only that index: gsi1 (no sort key: "" in state) is
	// planned exactly as it stands, not destroyed and re-added.
	t.Run("adding gsi2 plans only gsi2", func(t *testing.T) {
		o := *opts
		o.PlanFilePath = filepath.Join(t.TempDir(), "plan")
		rc, ok := terraform.InitAndPlanAndShowWithStruct(t, &o).ResourceChangesMap["aws_dynamodb_table.this"]
		require.True(t, ok, "the plan changes aws_dynamodb_table.this")
		after := map[string]string{}
		for _, g := range asList(rc.Change.After.(map[string]any)["global_secondary_index"]) {
			b, _ := json.Marshal(g)
			after[fmt.Sprint(g["name"])] = string(b)
		}
		before := asList(rc.Change.Before.(map[string]any)["global_secondary_index"])
		require.Len(t, before, 1)
		b, _ := json.Marshal(before[0])
		assert.JSONEq(t, string(b), after["gsi1"], "gsi1 is planned as it stands")
		assert.Contains(t, after, "gsi2")
		assert.Len(t, after, 2)
	})
	step("gsi2 added", func() {})
	assert.Len(t, describe(t, db, name).GlobalSecondaryIndexes, 2)
	vars["attributes"] = []map[string]any{{"name": "user_id", "type": "S"}, {"name": "country", "type": "S"}}
	vars["global_secondary_indexes"] = []map[string]any{{"name": "gsi2", "hash_key": "country", "projection_type": "KEYS_ONLY"}}
	t.Run("gsi1 dropped after its readers moved", func(t *testing.T) {
		terraform.Apply(t, opts)
		require.Len(t, describe(t, db, name).GlobalSecondaryIndexes, 1)
		// On the emulator the email definition stays (moto): requireEmptyPlan
		// accepts only its removal.
		requireEmptyPlan(t, opts, "gsi1 dropped")
	})

	if target.OnEmulator() {
		opts.Targets = []string{"aws_dynamodb_table.this"}
	}
	// DDB-CAP-01: a switch to PROVISIONED lands at the minimum, not 1/1.
	step("DDB-CAP-01 billing switched to PROVISIONED lands at the minimum", func() {
		maps.Copy(vars, map[string]any{"billing_mode": "PROVISIONED", "provisioned_reason": "steady load", "read_capacity": 5, "write_capacity": 4})
	})
	d := describe(t, db, name)
	assert.Equal(t, int64(5), aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits), "table RCU after the switch")
	assert.Equal(t, int64(4), aws.ToInt64(d.ProvisionedThroughput.WriteCapacityUnits), "table WCU after the switch")
	assert.Equal(t, [2]int64{5, 4}, gsiCapacity(d)["gsi2"], "gsi2 capacity after the switch")

	// DDB-CAP-01: capacity raised by auto scaling is not reset by the next plan, on the table or a GSI.
	_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(12), WriteCapacityUnits: aws.Int64(9)}})
	require.NoError(t, err)
	waitActive(t, db, name)
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name, GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{
		Update: &types.UpdateGlobalSecondaryIndexAction{IndexName: aws.String("gsi2"),
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(11), WriteCapacityUnits: aws.Int64(8)}}}}})
	require.NoError(t, err)
	d = waitActive(t, db, name)
	require.Equal(t, [2]int64{11, 8}, gsiCapacity(d)["gsi2"], "the emulator applied the raise")
	t.Run("DDB-CAP-01 capacity raised by auto scaling is kept", func(t *testing.T) {
		requireEmptyPlan(t, opts, "capacity auto scaling raised (table 12/9, gsi2 11/8) must not be planned back to the minimum")
	})

	// A minimum raised above the live capacity takes effect at once.
	step("minimum raised above the live capacity", func() { vars["read_capacity"] = 20 })
	d = describe(t, db, name)
	assert.Equal(t, int64(20), aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits), "table RCU = new minimum")
	assert.Equal(t, int64(9), aws.ToInt64(d.ProvisionedThroughput.WriteCapacityUnits), "table WCU auto scaling set is kept")
	assert.Equal(t, [2]int64{20, 8}, gsiCapacity(d)["gsi2"], "gsi2: RCU to the new minimum, WCU kept")

	// DDB-CAP-01: without auto scaling the configured capacity is applied as written.
	step("DDB-CAP-01 auto scaling off, capacity applied as written", func() {
		maps.Copy(vars, map[string]any{"autoscaling": map[string]any{"enabled": false}, "autoscaling_disabled_reason": "batch table, fixed capacity", "read_capacity": 7, "write_capacity": 6})
	})
	d = describe(t, db, name)
	assert.Equal(t, int64(7), aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits))
	assert.Equal(t, int64(6), aws.ToInt64(d.ProvisionedThroughput.WriteCapacityUnits))
	assert.Equal(t, [2]int64{7, 6}, gsiCapacity(d)["gsi2"])

	step("billing switched back to on-demand", func() {
		for _, k := range []string{"billing_mode", "provisioned_reason", "read_capacity", "write_capacity", "autoscaling", "autoscaling_disabled_reason"} {
			delete(vars, k)
		}
	})
	opts.Targets = nil
	assert.Equal(t, types.BillingModePayPerRequest, describe(t, db, name).BillingModeSummary.BillingMode)
}

// TestDay2KeyChangesRefused_DDB_IDX_01: on an applied table, a range key or an
// LSI added (each replaces the table and loses its data) is refused at plan
// with the rule ID and the migration path, and nothing changes.
func TestDay2KeyChangesRefused_DDB_IDX_01(t *testing.T) {
	t.Parallel() // its own tables: it runs beside the package's other tests
	vars := map[string]any{
		"env": "dev", "product": harness.UniqueID(), "usage": "user",
		"hash_key":   "user_id",
		"attributes": []map[string]any{{"name": "user_id", "type": "S"}, {"name": "country", "type": "S"}},
		"global_secondary_indexes": []map[string]any{
			{"name": "gsi1", "hash_key": "country", "projection_type": "KEYS_ONLY"},
		},
		"contributor_insights_enabled": !target.OnEmulator(),
	}
	opts := target.ApplyProtected(t, module, vars)
	name := tableName(vars)
	for what, change := range map[string]map[string]any{
		"range key added":  {"range_key": "country"},
		"LSI added":        {"range_key": "country", "local_secondary_indexes": []map[string]any{{"name": "lsi1", "range_key": "country", "projection_type": "KEYS_ONLY"}}},
		"hash key changed": {"hash_key": "country"},
	} {
		t.Run(what, func(t *testing.T) {
			o := *opts
			o.Vars = maps.Clone(vars)
			maps.Copy(o.Vars, change)
			diags := harness.PlanDiagnostics(t, &o)
			harness.RequireRefusal(t, diags, "DDB-IDX-01", "table "+name+":", "replaces the table", "dynops migrate")
		})
	}
	requireEmptyPlan(t, opts, "the refused plans changed nothing")
}

// TestAdoptTableMadeOutsideTerraform: a table made with the SDK (as the AWS
// CLI would), with a legacy name and several deviations, is adopted with
// `dynops table adopt`, imported through modules/dynamodb-stack and
// envs/tables.yaml, and the plan changes nothing but the module's tags; after
// that apply the plan is empty (issue 14, DDB-NAME-01 name override).
func TestAdoptTableMadeOutsideTerraform(t *testing.T) {
	t.Parallel() // its own tables: it runs beside the package's other tests
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	name := "Legacy_Users_" + id
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   &name,
		BillingMode: types.BillingModeProvisioned,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("email"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(2)},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:             aws.String("gsi1"),
			KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("email"), KeyType: types.KeyTypeHash}},
			Projection:            &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(2)},
		}},
		// Four deviations (deletion protection is on): with the module's
		// four standard tags, dynops:key-schema and the team's, ten tags.
		// moto pages ListTagsOfResource at 10 tags and, with 11 or more, the
		// provider's tag wait after an update times out (measured).
		DeletionProtectionEnabled: aws.Bool(true),
		StreamSpecification:       &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		Tags:                      []types.Tag{{Key: aws.String("team"), Value: aws.String("identity")}},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &name, DeletionProtectionEnabled: aws.Bool(false)})
		_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
		assert.NoError(t, err, "deleting the adopted table")
	})
	waitActive(t, db, name)

	opts := adoptAndApply(t, name, id, []string{"DDB-NAME-01", "DDB-CAP-01", "DDB-PITR-01", "DDB-NAME-03"},
		[]string{"name_override: " + name, "billing_mode: PROVISIONED", "projection_type: KEYS_ONLY", "ttl_enabled: false", "team: identity"})
	keySchemaTagRestored(t, opts, name)
	cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &name})
	require.NoError(t, err)
	assert.Equal(t, types.PointInTimeRecoveryStatusDisabled, cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus,
		"the adopted table keeps its settings until the team takes a fix")
}

// adoptAndApply adopts the table with `dynops table adopt` into an env root's
// stack (env dev, usage legacy): adopt lists each rule's deviation and the
// entry holds entryWants; the plan refuses every rule's placeholder reason,
// naming the table; with the reasons written the plan imports the table and
// changes nothing but the module's tags; after that apply the plan is empty
// and the table carries its dynops:key-schema tag. It returns the root's
// options (its plan file the last, empty, plan).
func adoptAndApply(t *testing.T, name, id string, rules, entryWants []string) *terraform.Options {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	// The root: an env root's stack over a tables.yaml holding the adopted entry.
	base := target.Options(t, "envs/dev", nil) // its override has no aliased providers
	root := filepath.Join(filepath.Dir(base.TerraformDir), "adopt")
	require.NoError(t, os.MkdirAll(root, 0o755))
	override, err := os.ReadFile(filepath.Join(base.TerraformDir, "zz_harness_override.tf"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "zz_harness_override.tf"), override, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.tf"), []byte(`provider "aws" {
  region = "eu-west-1"
}

module "stack" {
  source  = "../../modules/dynamodb-stack"
  env     = "dev"
  product = "`+id+`"
  tables  = yamldecode(file("${path.module}/tables.yaml"))

  contributor_insights_enabled = false
  account_alarms_enabled       = false
}
`), 0o644))

	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	out, stderr, code := target.Dynops(t, auditLog, "table", "adopt", "--table", name, "--env", "dev", "--product", id, "--usage", "legacy",
		"--entry-out", filepath.Join(root, "tables.yaml"), "--imports-out", filepath.Join(root, "adopt.tf"))
	require.Equal(t, 0, code, stderr)
	for _, rule := range rules {
		assert.Contains(t, out, "#   "+rule+": ", "adopt lists the %s deviation", rule)
	}
	entry, err := os.ReadFile(filepath.Join(root, "tables.yaml"))
	require.NoError(t, err)
	for _, want := range entryWants {
		assert.Contains(t, string(entry), want)
	}

	opts := &terraform.Options{TerraformDir: root, EnvVars: base.EnvVars, NoColor: true,
		Targets: []string{`module.stack.module.table["legacy"]`}, PlanFilePath: filepath.Join(t.TempDir(), "plan.out")}
	// Adopt's placeholder reasons are refused until a person writes them:
	// every deviation's rule at once (the module's variable validations run
	// together), each naming the table.
	diags := harness.PlanDiagnostics(t, opts)
	for _, rule := range rules {
		harness.RequireRefusal(t, diags, rule, "table "+name, "placeholder")
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "tables.yaml"),
		[]byte(strings.ReplaceAll(string(entry), adopt.Placeholder, "adopted legacy table, OPS-77")), 0o644))

	p := terraform.InitAndPlanAndShowWithStruct(t, opts)
	addr := `module.stack.module.table["legacy"].aws_dynamodb_table.this`
	rc, ok := p.ResourceChangesMap[addr]
	require.True(t, ok, "the plan imports %s", addr)
	assert.True(t, rc.Change.Actions.NoOp() || rc.Change.Actions.Update(), "the table is imported, not created or replaced: %v", rc.Change.Actions)
	require.NotNil(t, rc.Change.Importing, "the plan imports the table")
	before, _ := rc.Change.Before.(map[string]any)
	after, _ := rc.Change.After.(map[string]any)
	require.NotNil(t, before)
	for k := range after {
		if k == "tags" || k == "tags_all" {
			continue
		}
		bj, _ := json.Marshal(before[k])
		aj, _ := json.Marshal(after[k])
		assert.JSONEq(t, string(bj), string(aj), "%s changes on import; only the module's tags may", k)
	}
	for other, c := range p.ResourceChangesMap {
		if other == `module.stack.module.table["legacy"].terraform_data.key_schema` {
			assert.True(t, c.Change.Actions.Create(), "the key schema is recorded (DDB-IDX-01): %v", c.Change.Actions)
			continue
		}
		if other != addr && strings.HasPrefix(other, `module.stack.module.table["legacy"]`) {
			assert.True(t, c.Change.Actions.NoOp(), "%s: nothing else changes: %v", other, c.Change.Actions)
		}
	}
	assert.Equal(t, wantKeySchema(t, db, name), rc.Change.After.(map[string]any)["tags"].(map[string]any)["dynops:key-schema"],
		"the import plan gives the adopted table its dynops:key-schema tag")
	terraform.Apply(t, opts)
	assert.Equal(t, 0, terraform.PlanExitCode(t, opts), "after the import the plan is empty")

	// The tag is on the table (read back from the service) and records the
	// key schema DynamoDB reports: hash, range and every LSI's sort key.
	assert.Equal(t, wantKeySchema(t, db, name), tableTags(t, db, name)["dynops:key-schema"], "the adopted table carries dynops:key-schema after the first apply")
	return opts
}

// keySchemaTagRestored: a change of an adopted table's dynops:key-schema tag
// outside Terraform is not ignored: the plan shows it (exit 2) and the apply
// restores it, after which the plan is empty. (The tag is removed, not
// overwritten: moto's TagResource appends a second entry for an existing key
// instead of replacing it.) One adoption checks it (the mechanism is the
// module's, the same for every shape TestAdoptSingleTableShapes adopts).
func keySchemaTagRestored(t *testing.T, opts *terraform.Options, name string) {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	want := wantKeySchema(t, db, name)
	arn := describe(t, db, name).TableArn
	_, err := db.UntagResource(context.Background(), &dynamodb.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"dynops:key-schema"}})
	require.NoError(t, err)
	require.NotContains(t, tableTags(t, db, name), "dynops:key-schema")
	assert.Equal(t, 2, terraform.PlanExitCode(t, opts), "a dynops:key-schema tag removed outside Terraform shows in the plan")
	terraform.Apply(t, opts)
	assert.Equal(t, want, tableTags(t, db, name)["dynops:key-schema"], "the apply restores dynops:key-schema")
	assert.Equal(t, 0, terraform.PlanExitCode(t, opts), "after the restore the plan is empty")
}

// wantKeySchema is the dynops:key-schema value for the table as DynamoDB
// describes it (the module's format: "hash=H range=R|- LSI=SK ...", LSIs sorted).
func wantKeySchema(t *testing.T, db *dynamodb.Client, name string) string {
	t.Helper()
	d := describe(t, db, name)
	hash, rng := "", "-"
	for _, k := range d.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			hash = aws.ToString(k.AttributeName)
		} else {
			rng = aws.ToString(k.AttributeName)
		}
	}
	var lsis []string
	for _, l := range d.LocalSecondaryIndexes {
		for _, k := range l.KeySchema {
			if k.KeyType == types.KeyTypeRange {
				lsis = append(lsis, aws.ToString(l.IndexName)+"="+aws.ToString(k.AttributeName))
			}
		}
	}
	sort.Strings(lsis)
	return strings.Join(append([]string{"hash=" + hash, "range=" + rng}, lsis...), " ")
}

// tableTags reads the table's tags back from the service (ListTagsOfResource, every page).
func tableTags(t *testing.T, db *dynamodb.Client, name string) map[string]string {
	t.Helper()
	tags, err := ddbtags.List(context.Background(), db, aws.ToString(describe(t, db, name).TableArn))
	require.NoError(t, err)
	return tags
}
