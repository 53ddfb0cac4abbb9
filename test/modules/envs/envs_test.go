// Package envs tests the environment roots: offline plans of every env
// (names, replicas, guideline defaults) and an apply of envs/local on the
// emulator followed by `dynops check --env local`.
package envs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

func tablesInPlan(t *testing.T, p *terraform.PlanStruct) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for addr, rc := range p.ResourcePlannedValuesMap {
		if rc.Type == "aws_dynamodb_table" && rc.Mode == "managed" {
			out[rc.AttributeValues["name"].(string)] = rc.AttributeValues
			t.Logf("%s -> %s", addr, rc.AttributeValues["name"])
		}
	}
	return out
}

// envVars are the inputs of an env root's offline plan.
func envVars(env string) map[string]any {
	vars := map[string]any{}
	switch env {
	case "dev", "stg":
		// The access policies and the alarm topic's key policy name the account.
		vars["account_id"] = "123456789012"
	case "prod":
		vars["account_id"] = "123456789012"
		vars["failover_trusted_principal_arns"] = []string{"arn:aws:iam::123456789012:role/oncall"}
	}
	return vars
}

var envNames = []string{"local", "dev", "stg", "prod"}

// envPlans plans the four env roots in one terraform run (harness.PlanGroup).
var envPlans = func() *harness.PlanGroup {
	var cases []harness.PlanCase
	for _, env := range envNames {
		cases = append(cases, harness.PlanCase{Name: env, Dir: filepath.Join("envs", env), Vars: func(testing.TB) map[string]any { return envVars(env) }})
	}
	// prod with the readiness run on (envs/*/readiness.tf, opt-in).
	cases = append(cases, harness.PlanCase{Name: "prod+readiness", Dir: "envs/prod", Vars: func(t testing.TB) map[string]any {
		v := envVars("prod")
		v["readiness"] = map[string]any{"zip_path": harness.PlanZip(t), "restore_table_usage": "user"}
		return v
	}})
	return harness.NewPlanGroup(cases...)
}()

func TestPlanEveryEnv(t *testing.T) {
	for _, env := range envNames {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			p := envPlans.Plan(t, env)
			tables := tablesInPlan(t, p)
			names := make([]string, 0, len(tables))
			for n := range tables {
				names = append(names, n)
			}
			sort.Strings(names)
			assert.Equal(t, []string{env + "-hoge-order", env + "-hoge-session", env + "-hoge-user"}, names, "DDB-NAME-01")

			for name, tbl := range tables {
				assert.Equal(t, "PAY_PER_REQUEST", tbl["billing_mode"], "%s DDB-CAP-01", name)
				assert.Equal(t, true, tbl["deletion_protection_enabled"], "%s DDB-PROT-01", name)
				pitr := tbl["point_in_time_recovery"].([]any)[0].(map[string]any)
				assert.EqualValues(t, 35, pitr["recovery_period_in_days"], "%s DDB-PITR-01", name)
			}
			// Replicas are aws_dynamodb_table_replica resources (modules/dynamodb-table-replica):
			// deletion protection and PITR on each (DDB-PROT-01, DDB-PITR-01, issue 14 bug 4).
			var replicas []map[string]any
			for addr, rc := range p.ResourcePlannedValuesMap {
				if rc.Type == "aws_dynamodb_table_replica" {
					t.Logf("replica %s", addr)
					replicas = append(replicas, rc.AttributeValues)
				}
			}
			if env == "prod" {
				require.Len(t, replicas, 1, "prod's session table is a global table (DDB-DR-01)")
				assert.Equal(t, true, replicas[0]["deletion_protection_enabled"], "DDB-PROT-01 on the replica")
				assert.Equal(t, true, replicas[0]["point_in_time_recovery"], "DDB-PITR-01 on the replica")
				tags, _ := replicas[0]["tags"].(map[string]any)
				assert.Equal(t, "session", tags["usage"], "the replica carries the table's tags")
			} else {
				assert.Empty(t, replicas, "only prod has replicas")
			}
			for name, tbl := range tables {
				inline, _ := tbl["replica"].([]any)
				assert.Empty(t, inline, "%s: no inline replica blocks (they cannot carry deletion protection)", name)
			}
			_, ci := p.ResourcePlannedValuesMap[`module.stack.module.table["user"].aws_dynamodb_contributor_insights.table[0]`]
			assert.Equal(t, env != "local", ci, "Contributor Insights everywhere but on the emulator")
		})
	}
}

func TestApplyLocalThenCheck(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("envs/local is the emulator's environment; on AWS the dev/stg/prod roots are applied by their pipelines")
	}
	opts := target.Options(t, "envs/local", map[string]any{})
	terraform.InitAndApply(t, opts)
	// No destroy: deletion protection is on (DDB-PROT-01); the emulator is discarded with the package.

	var names []string
	require.NoError(t, json.Unmarshal([]byte(terraform.OutputJson(t, opts, "table_names")), &names))
	assert.Len(t, names, 3)

	out, _, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "check", "--env", "local", "-o", "json")
	require.Equal(t, 0, code, "every guideline rule passes on envs/local")
	var rep struct {
		Tables  []string
		Summary struct{ Pass, Fail int }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.ElementsMatch(t, names, rep.Tables)
	assert.Zero(t, rep.Summary.Fail)

	// A second plan (what `make plan ENV=local` shows after an apply) has
	// only the changes docs/day2.md says an emulator plan always shows:
	// moto stores no AWS Backup vault or plan tags, and no table's
	// on-demand maximums (OnDemandThroughput).
	opts.PlanFilePath = filepath.Join(t.TempDir(), "second.plan")
	second := terraform.InitAndPlanAndShowWithStruct(t, opts)
	for addr, rc := range second.ResourceChangesMap {
		if rc.Change.Actions.NoOp() || rc.Change.Actions.Read() {
			continue
		}
		if ignored, ok := emulatorDrift[rc.Type]; ok && rc.Change.Actions.Update() {
			assert.Equal(t, without(rc.Change.Before, ignored), without(rc.Change.After, ignored), "%s: only %v may change on the emulator", addr, ignored)
			continue
		}
		t.Errorf("%s: %v on the second plan of envs/local; docs/day2.md lists only the emulator's drift (%v)", addr, rc.Change.Actions, emulatorDrift)
	}
}

// emulatorDrift is what moto does not store, by resource type: the only
// attributes a second plan of envs/local may change (docs/day2.md).
var emulatorDrift = map[string][]string{
	"aws_backup_vault":   {"tags", "tags_all"},
	"aws_backup_plan":    {"tags", "tags_all"},
	"aws_dynamodb_table": {"on_demand_throughput"},
}

// without is a planned object without the named attributes.
func without(v any, names []string) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, x := range m {
		if !slices.Contains(names, k) {
			out[k] = x
		}
	}
	return out
}

// TestEnvRootsNeedTerraformForUseLockfile: a root whose S3 backend uses
// use_lockfile (terraform 1.11) must not accept an older terraform, its
// provider constraint has an upper bound, and its lock file is committed.
func TestEnvRootsNeedTerraformForUseLockfile(t *testing.T) {
	minVersion := regexp.MustCompile(`required_version\s*=\s*">=\s*1\.(\d+)\.\d+, < 2\.0\.0"`)
	pinned := regexp.MustCompile(`(?s)aws\s*=\s*\{.*version\s*=\s*"(\d+\.\d+\.\d+|[^"]*<[^"]*)"`)
	dirs, err := filepath.Glob(filepath.Join(harness.RepoRoot(), "envs", "*", "versions.tf"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, versions := range dirs {
		dir := filepath.Dir(versions)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var all strings.Builder
			tfs, err := filepath.Glob(filepath.Join(dir, "*.tf"))
			require.NoError(t, err)
			for _, f := range tfs {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				all.Write(b)
			}
			src := all.String()
			m := minVersion.FindStringSubmatch(src)
			require.NotNil(t, m, "%s: required_version must be \">= 1.N.0, < 2.0.0\"", dir)
			minor, _ := strconv.Atoi(m[1])
			if strings.Contains(src, "use_lockfile") {
				assert.GreaterOrEqual(t, minor, 11, "%s: the S3 backend's use_lockfile needs terraform >= 1.11", dir)
			}
			assert.Regexp(t, pinned, src, "%s: the aws provider is pinned or has an upper bound", dir)
			lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
			require.NoError(t, err, "%s: .terraform.lock.hcl is committed", dir)
			assert.Contains(t, string(lock), `provider "registry.terraform.io/hashicorp/aws"`)
		})
	}
}

// TestPlanEnvReadinessOptIn_DDB_PITR_01: the env roots plan no readiness run
// unless asked; with `readiness` set, prod's run restores the chosen usage's
// table and alarms to the stack's topic, and a usage not in envs/tables.yaml
// is refused naming the file.
func TestPlanEnvReadinessOptIn_DDB_PITR_01(t *testing.T) {
	t.Parallel()
	functions := func(p *terraform.PlanStruct) map[string]map[string]any {
		out := map[string]map[string]any{}
		for addr, rc := range p.ResourcePlannedValuesMap {
			if rc.Type == "aws_lambda_function" && strings.HasPrefix(addr, "module.readiness[0].") {
				out[addr] = rc.AttributeValues
			}
		}
		return out
	}
	assert.Empty(t, functions(envPlans.Plan(t, "prod")), "no readiness run unless var.readiness is set")

	// The table ARN and the stack's topic are unknown until apply: the plan
	// shows the function, its schedule and an alarm per rule plus the
	// restore and DR alarms, each with alarm actions (the stack's topic).
	p := envPlans.Plan(t, "prod+readiness")
	require.Len(t, functions(p), 1, "one readiness function")
	alarms, schedules := 0, 0
	for addr, rc := range p.ResourceChangesMap {
		if !strings.HasPrefix(addr, "module.readiness[0].") {
			continue
		}
		switch rc.Type {
		case "aws_cloudwatch_metric_alarm":
			alarms++
			unknown, _ := rc.Change.AfterUnknown.(map[string]any)
			assert.Equal(t, true, unknown["alarm_actions"], "%s: alarm actions from the stack's topic (known at apply)", addr)
		case "aws_scheduler_schedule":
			schedules++
			assert.Equal(t, "rate(1 day)", rc.Change.After.(map[string]any)["schedule_expression"], addr)
		}
	}
	assert.Greater(t, alarms, 30, "an alarm per guideline rule, plus the restore and DR alarms")
	assert.Equal(t, 1, schedules, "one schedule")

	bad := envVars("prod")
	bad["readiness"] = map[string]any{"zip_path": "bin/readiness.zip", "restore_table_usage": "users"}
	harness.ExpectRefusals(t, "envs/prod", []harness.Refusal{
		{Name: "DDB-PITR-01 restore usage not in tables.yaml", Vars: bad, Want: []string{"DDB-PITR-01: readiness.restore_table_usage must be a usage of envs/tables.yaml"}},
	})
}
