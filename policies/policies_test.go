package policies_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/policies"
	"github.com/dynops/dynops/test/helpers/harness"
)

var ruleID = regexp.MustCompile(`^(DDB-[A-Z]+-[0-9]{2}): `)

func evaluator(t *testing.T) *policies.Evaluator {
	t.Helper()
	e, err := policies.New(context.Background())
	require.NoError(t, err)
	return e
}

// ids returns the rule IDs of the deny messages, failing for a message that
// does not start with one.
func ids(t *testing.T, msgs []string) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		id := ruleID.FindStringSubmatch(m)
		if !assert.NotNil(t, id, "deny message does not start with a rule ID: %s", m) {
			continue
		}
		if !slices.Contains(out, id[1]) {
			out = append(out, id[1])
		}
	}
	slices.Sort(out)
	return out
}

// fixtureRule is the rule ID a bad fixture is named for: bad-DDB-CAP-01.json
// or, one fixture per deny rule, bad-DDB-CAP-01-no-reason.json.
var fixtureRule = regexp.MustCompile(`^bad-(DDB-[A-Z]+-[0-9]{2})(-[a-z0-9-]+)?$`)

// TestFixtures: every bad fixture is denied with its rule's ID (and nothing
// else unless listed), a fixture full of exceptions passes, and where a
// fixture has a .want file beside it the full set of deny messages is
// compared, so a second deny rule with the same ID that stops firing (or a
// message that loses its fix) is noticed.
func TestFixtures(t *testing.T) {
	e := evaluator(t)
	also := map[string][]string{
		// dynamodb:* on * is also not scoped to an environment.
		"DDB-SEC-01": {"DDB-SEC-03"},
	}
	files, err := filepath.Glob("testdata/fixtures/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			msgs, err := e.Deny(context.Background(), b)
			require.NoError(t, err)
			for _, m := range msgs {
				t.Log(m)
			}
			var want []string
			if m := fixtureRule.FindStringSubmatch(name); m != nil {
				want = append([]string{m[1]}, also[m[1]]...)
				slices.Sort(want)
			} else {
				require.True(t, strings.HasPrefix(name, "good-"), "fixture %s: name it bad-RULE[-what].json or good-*.json", name)
			}
			assert.Equal(t, want, ids(t, msgs))
			if wantFile, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".want"); err == nil {
				var full []string
				for _, l := range strings.Split(strings.TrimSpace(string(wantFile)), "\n") {
					if l = strings.TrimSpace(l); l != "" {
						full = append(full, l)
					}
				}
				slices.Sort(full)
				assert.Equal(t, full, msgs, "the full set of deny messages (%s.want)", name)
			}
		})
	}
}

// TestEveryGuardRuleHasABadFixture: the rules in the Rego files and the bad
// fixtures name the same IDs.
func TestEveryGuardRuleHasABadFixture(t *testing.T) {
	var inRego []string
	regos, err := filepath.Glob("*.rego")
	require.NoError(t, err)
	quoted := regexp.MustCompile(`"(DDB-[A-Z]+-[0-9]{2}): `)
	// conftest reads a rule named exception as its own exception mechanism.
	conftestReserved := regexp.MustCompile(`(?m)^exception\b`)
	for _, f := range regos {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.False(t, conftestReserved.Match(b), "%s defines a rule named exception, which conftest reserves", f)
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(inRego, m[1]) {
				inRego = append(inRego, m[1])
			}
		}
	}
	var fixtures []string
	bad, err := filepath.Glob("testdata/fixtures/bad-*.json")
	require.NoError(t, err)
	for _, f := range bad {
		m := fixtureRule.FindStringSubmatch(strings.TrimSuffix(filepath.Base(f), ".json"))
		if assert.NotNil(t, m, "fixture name %s", f) && !slices.Contains(fixtures, m[1]) {
			fixtures = append(fixtures, m[1])
		}
	}
	slices.Sort(inRego)
	slices.Sort(fixtures)
	assert.Equal(t, inRego, fixtures)
	t.Logf("%d guard rules: %s", len(inRego), strings.Join(inRego, " "))
}

// TestEveryDenyRuleFires: with OPA's coverage tracer over every bad fixture,
// the last expression of each deny rule (the message) is reached, so a deny
// rule that stops firing fails here even when another rule with the same ID
// still fires; over the good fixture, none is reached.
func TestEveryDenyRuleFires(t *testing.T) {
	ctx := context.Background()
	modules := map[string]*ast.Module{}
	regos, err := filepath.Glob("*.rego")
	require.NoError(t, err)
	var opts []func(*rego.Rego)
	for _, f := range regos {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		m, err := ast.ParseModuleWithOpts(f, string(b), ast.ParserOptions{RegoVersion: ast.RegoV1})
		require.NoError(t, err)
		modules[f] = m
		opts = append(opts, rego.ParsedModule(m))
	}
	data, err := os.ReadFile("data.json")
	require.NoError(t, err)
	var store map[string]any
	require.NoError(t, json.Unmarshal(data, &store))

	run := func(pattern string) cover.Report {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, files)
		cov := cover.New()
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			var input any
			require.NoError(t, json.Unmarshal(b, &input))
			r := rego.New(append(opts, rego.Query(policies.Query), rego.Store(inmem.NewFromObject(store)), rego.Input(input), rego.QueryTracer(cov))...)
			_, err = r.Eval(ctx)
			require.NoError(t, err, f)
		}
		return cov.Report(modules)
	}
	bad, good := run("testdata/fixtures/bad-*.json"), run("testdata/fixtures/good-*.json")
	rules := 0
	// Every Rego file: each deny rule (not only each rule ID) must fire on
	// some bad fixture and on no good one (issue 18).
	for _, f := range regos {
		for _, rule := range modules[f].Rules {
			if rule.Head.Ref().String() != "deny" || len(rule.Body) == 0 {
				continue
			}
			rules++
			last := rule.Body[len(rule.Body)-1].Location
			assert.True(t, bad.IsCovered(f, last.Row), "%s:%d: this deny rule fires on no bad fixture; add testdata/fixtures/bad-RULE-what.json for it", f, rule.Location.Row)
			assert.False(t, good.IsCovered(f, last.Row), "%s:%d: this deny rule fires on the good fixture", f, rule.Location.Row)
		}
	}
	require.Positive(t, rules)
	t.Logf("%d deny rules in %v, each fired by a bad fixture", rules, regos)
}

// assertGuidelineList: the list data.json's guideline holds under key is
// want, in any order (one definition on each side, kept in sync here).
func assertGuidelineList(t *testing.T, key string, want []string) {
	t.Helper()
	b, err := os.ReadFile("data.json")
	require.NoError(t, err)
	var data struct {
		Guideline map[string]any `json:"guideline"`
	}
	require.NoError(t, json.Unmarshal(b, &data))
	list, ok := data.Guideline[key].([]any)
	require.True(t, ok, "data.json: guideline.%s is not a list", key)
	var got []string
	for _, v := range list {
		got = append(got, v.(string))
	}
	want = slices.Clone(want)
	slices.Sort(want)
	slices.Sort(got)
	assert.Equal(t, want, got, "data.json guideline.%s", key)
}

// TestUnscopedActionsAgree: the actions DDB-SEC-03 lets through on "*" are
// the ones internal/permissions puts on "*" for the operator role.
func TestUnscopedActionsAgree(t *testing.T) {
	var want []string
	for _, a := range permissions.Unscoped() {
		if strings.HasPrefix(a, "dynamodb:") {
			want = append(want, a)
		}
	}
	assertGuidelineList(t, "unscoped_dynamodb_actions", want)
}

// TestFenceSidsAgree: the fence Sids DDB-DR-02 keeps a plan from removing
// are the ones `dynops dr` and `dynops migrate` write (internal/failover).
func TestFenceSidsAgree(t *testing.T) {
	assertGuidelineList(t, "fence_sids", []string{failover.FenceSid, failover.FailbackFenceSid, failover.MigrateFenceSid})
}

// plan returns `terraform show -json` of an offline plan of the root at dir.
func plan(t *testing.T, dir string, vars map[string]any) []byte {
	t.Helper()
	opts := harness.PlanOptions(t, dir, vars)
	opts.Logger = logger.Discard // the deny messages are the output
	return []byte(terraform.InitAndPlanAndShow(t, opts))
}

// roots lists every env root and every module example (directories with .tf files).
func roots(t *testing.T) []string {
	t.Helper()
	repo := harness.RepoRoot()
	var out []string
	for _, pattern := range []string{"envs/*", "modules/*/examples/*"} {
		dirs, err := filepath.Glob(filepath.Join(repo, pattern))
		require.NoError(t, err)
		for _, d := range dirs {
			if tfs, _ := filepath.Glob(filepath.Join(d, "*.tf")); len(tfs) > 0 {
				rel, err := filepath.Rel(repo, d)
				require.NoError(t, err)
				out = append(out, filepath.ToSlash(rel))
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// network is an env's application VPC for the DynamoDB endpoint (DDB-SEC-05).
var network = map[string]any{"vpc_id": "vpc-0123456789abcdef0", "route_table_ids": []string{"rtb-0123456789abcdef0"}}

// rootVars are the inputs of an env root or example's offline plan.
func rootVars(t testing.TB, dir string) map[string]any {
	var vars map[string]any
	switch {
	case dir == "envs/local":
		// The emulator's env: its endpoint comes from AWS_ENDPOINT_URL.
		vars = map[string]any{}
	case dir == "envs/prod":
		vars = map[string]any{"account_id": "123456789012", "failover_trusted_principal_arns": []string{"arn:aws:iam::123456789012:role/oncall"}, "network": network}
	case strings.HasPrefix(dir, "envs/"):
		// The access policies need the account ID (no STS call at plan time);
		// the VPC endpoint the network (DDB-SEC-05).
		vars = map[string]any{"account_id": "123456789012", "network": network}
	case dir == "modules/dr/examples/two-region", dir == "modules/dynamodb-stack/examples/migration":
		vars = map[string]any{"account_id": "123456789012"}
	case dir == "modules/stream-consumer/examples/go-consumer":
		vars = map[string]any{"filename": harness.PlanZip(t), "account_id": "123456789012"}
	case dir == "modules/dynamodb-export/examples/scheduled":
		vars = map[string]any{"scheduler_zip_path": harness.PlanZip(t), "account_id": "123456789012"}
	case dir == "modules/dynamodb-readiness/examples/daily":
		vars = map[string]any{"readiness_zip_path": harness.PlanZip(t), "account_id": "123456789012"}
	case dir == "modules/dynamodb-alarms/examples/basic", dir == "modules/dynamodb-table/examples/basic":
		vars = map[string]any{"account_id": "123456789012"}
	}
	return vars
}

// rootPlans plans every env root and example in one terraform run
// (harness.PlanGroup); each subtest of TestRootsPass reads its own root.
func rootPlans(t *testing.T) ([]string, *harness.PlanGroup) {
	t.Helper()
	rootGroup.once.Do(func() {
		rootGroup.dirs = roots(t)
		var cases []harness.PlanCase
		for _, dir := range rootGroup.dirs {
			cases = append(cases, harness.PlanCase{Name: dir, Dir: dir, Vars: func(tb testing.TB) map[string]any { return rootVars(tb, dir) }})
		}
		rootGroup.plans = harness.NewPlanGroup(cases...)
		rootGroup.plans.Quiet = true // the deny messages are the output
	})
	return rootGroup.dirs, rootGroup.plans
}

// rootGroup is the one group of root plans the tests share.
var rootGroup struct {
	once  sync.Once
	dirs  []string
	plans *harness.PlanGroup
}

// TestGroupedRootPlanMatchesPlanAlone: an env root (its own provider and S3
// backend) planned in the group gives the same resource changes, which the
// rules read, as the root planned alone.
func TestGroupedRootPlanMatchesPlanAlone(t *testing.T) {
	const dir = "envs/dev"
	_, plans := rootPlans(t)
	grouped := plans.PlanJSON(t, dir)
	require.True(t, plans.PlannedTogether(dir), "%s must come from the grouped plan", dir)
	alone := plan(t, dir, rootVars(t, dir))
	changes := func(js []byte) map[string]any {
		var p struct {
			ResourceChanges []map[string]any `json:"resource_changes"`
		}
		require.NoError(t, json.Unmarshal(js, &p))
		out := map[string]any{}
		for _, rc := range p.ResourceChanges {
			out[rc["address"].(string)] = rc
		}
		return out
	}
	want, got := changes(alone), changes(grouped)
	require.NotEmpty(t, want)
	assert.Equal(t, want, got)
}

// TestRootsPass: every env root and example plans clean under every rule.
func TestRootsPass(t *testing.T) {
	e := evaluator(t)
	dirs, plans := rootPlans(t)
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			planJSON := plans.PlanJSON(t, dir)
			var p struct {
				ResourceChanges []struct {
					Type string `json:"type"`
				} `json:"resource_changes"`
			}
			require.NoError(t, json.Unmarshal(planJSON, &p))
			tables := 0
			for _, rc := range p.ResourceChanges {
				if rc.Type == "aws_dynamodb_table" {
					tables++
				}
			}
			require.Positive(t, len(p.ResourceChanges), "%s: the plan is empty; nothing would be checked", dir)
			msgs, err := e.Deny(context.Background(), planJSON)
			require.NoError(t, err)
			assert.Empty(t, msgs, "%s must pass every guard rule", dir)
			t.Logf("%s: %d resources, %d tables, no deny", dir, len(p.ResourceChanges), tables)
			denyWhereDue(t, e, dir, planJSON)
		})
	}
}

// TestBadEnvDenied is the expected-deny stage of `make policy`: the bad env
// (raw resources that bypass the modules) is denied with the rule IDs.
func TestBadEnvDenied(t *testing.T) {
	e := evaluator(t)
	msgs, err := e.Deny(context.Background(), plan(t, "policies/testdata/bad-env", nil))
	require.NoError(t, err)
	t.Logf("policies/testdata/bad-env: %d denies", len(msgs))
	for _, m := range msgs {
		t.Log("  deny: " + m)
	}
	assert.Equal(t, []string{"DDB-NAME-02", "DDB-PITR-01", "DDB-SEC-01", "DDB-SEC-03"}, ids(t, msgs))
}

// denyWhereDue: a root passing proves little if the rules deny nothing. The
// root's real plan is broken on purpose, one guideline default at a time, on
// every table and replica, and each break must be denied for that resource,
// so a rule that stopped firing on real plan shapes fails here.
func denyWhereDue(t *testing.T, e *policies.Evaluator, dir string, planJSON []byte) {
	t.Helper()
	breaks := []struct {
		rule  string
		types []string
		apply func(after map[string]any)
	}{
		{"DDB-PROT-01", []string{"aws_dynamodb_table", "aws_dynamodb_table_replica"}, func(a map[string]any) { a["deletion_protection_enabled"] = false }},
		{"DDB-PITR-01", []string{"aws_dynamodb_table"}, func(a map[string]any) {
			a["point_in_time_recovery"] = []any{map[string]any{"enabled": false}}
		}},
		{"DDB-PITR-01", []string{"aws_dynamodb_table_replica"}, func(a map[string]any) { a["point_in_time_recovery"] = false }},
		{"DDB-STREAM-01", []string{"aws_dynamodb_table"}, func(a map[string]any) {
			if a["stream_enabled"] == true {
				a["stream_view_type"] = "KEYS_ONLY"
			}
		}},
		{"DDB-CAP-01", []string{"aws_dynamodb_table"}, func(a map[string]any) { a["billing_mode"] = "PROVISIONED" }},
		// The cost ceiling of an on-demand table in a protected env (prod's tables).
		{"DDB-CAP-04", []string{"aws_dynamodb_table"}, func(a map[string]any) {
			tags, _ := a["tags"].(map[string]any)
			if env, _ := tags["env"].(string); slices.Contains(protect.BuiltinProtected(), env) && a["billing_mode"] == "PAY_PER_REQUEST" {
				a["on_demand_throughput"] = []any{}
			}
		}},
	}
	for _, b := range breaks {
		var p map[string]any
		require.NoError(t, json.Unmarshal(planJSON, &p))
		var due []string
		rcs, _ := p["resource_changes"].([]any)
		for _, x := range rcs {
			rc, _ := x.(map[string]any)
			change, _ := rc["change"].(map[string]any)
			after, _ := change["after"].(map[string]any)
			if after == nil || rc["mode"] != "managed" || !slices.Contains(b.types, rc["type"].(string)) {
				continue
			}
			before, _ := json.Marshal(after)
			// The break removes the resource's exception for the rule, if any.
			if tags, ok := after["tags"].(map[string]any); ok {
				delete(tags, "dynops:exception:"+b.rule)
			}
			b.apply(after)
			if now, _ := json.Marshal(after); string(now) != string(before) {
				due = append(due, rc["address"].(string))
			}
		}
		if len(due) == 0 {
			continue
		}
		broken, err := json.Marshal(p)
		require.NoError(t, err)
		msgs, err := e.Deny(context.Background(), broken)
		require.NoError(t, err)
		for _, addr := range due {
			found := slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, b.rule+": "+addr+":") })
			assert.True(t, found, "%s: breaking %s on %s must be denied; denies: %v", dir, b.rule, addr, msgs)
		}
		t.Logf("%s: %s broken on %d resources, each denied", dir, b.rule, len(due))
	}
}

// TestProtectedEnvsAgree_DDB_CAP_04: the envs whose on-demand tables need a
// cost ceiling are dynops's built-in protected envs, in Rego (data.json) and
// in the table module's default.
func TestProtectedEnvsAgree_DDB_CAP_04(t *testing.T) {
	assertGuidelineList(t, "protected_envs", protect.BuiltinProtected())
	b, err := os.ReadFile("../modules/dynamodb-table/variables.tf")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)variable "protected_envs" \{.*?default\s*=\s*(\[[^\]]*\])`).FindSubmatch(b)
	require.NotNil(t, m, "modules/dynamodb-table: variable protected_envs with a default")
	var module []string
	require.NoError(t, json.Unmarshal(m[1], &module))
	assert.ElementsMatch(t, protect.BuiltinProtected(), module)
}
