package access

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/iamsim"
)

// Decisions of the evaluator (its overallResult).
const (
	allowed  = iamsim.Allowed
	implicit = iamsim.Implicit
	explicit = iamsim.Explicit
	denied   = "Denied" // either kind of deny
)

type (
	simulation  = iamsim.Simulation
	namedPolicy = iamsim.NamedPolicy
	request     = iamsim.Request
	resource    = iamsim.Resource
	result      = iamsim.Result
)

// cell is one request of the matrix and the decision it must get.
type cell struct {
	row, col string
	want     string
	sim      simulation
	got      result
}

func (c cell) ok() bool {
	if c.want == denied {
		return c.got.OverallResult == implicit || c.got.OverallResult == explicit
	}
	return c.got.OverallResult == c.want
}

// evaluate runs every cell through the real IAM evaluator in one node process.
func evaluate(t *testing.T, cells []cell) {
	t.Helper()
	sims := make([]simulation, len(cells))
	for i, c := range cells {
		sims[i] = c.sim
	}
	for i, r := range iamsim.Run(t, sims) {
		cells[i].got = r
	}
}

func tableARN(env, usage string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s-example-%s", region, accountID, env, usage)
}

// matrix builds cells for one principal with one identity policy.
type matrix struct {
	cells     []cell
	principal string
	policy    any
	tags      map[string]any
}

func (m *matrix) add(row, col, want, action, arn string, ctx map[string]any) {
	vars := map[string]any{}
	for k, v := range m.tags {
		vars[k] = v
	}
	for k, v := range ctx {
		if v == nil {
			delete(vars, k)
			continue
		}
		vars[k] = v
	}
	m.cells = append(m.cells, cell{row: row, col: col, want: want, sim: simulation{
		IdentityPolicies:        []namedPolicy{{Name: "planned", Policy: m.policy}},
		ServiceControlPolicies:  []any{},
		ResourceControlPolicies: []any{},
		Request: request{
			Principal: m.principal, Action: action,
			Resource:         resource{Resource: arn, AccountID: accountID},
			ContextVariables: vars,
		},
	}})
}

func keysOf(k ...string) map[string]any { return map[string]any{"dynamodb:LeadingKeys": k} }

// TestTenantIsolation_DDB_SEC_02 evaluates the tenant policy from the plan
// with a real IAM evaluator: a session tagged tenant_id=t1 against its own
// keys, another tenant's, a key that merely starts with "t1" (t10), another
// env's table, an untagged session, mixed batches, the indexes and Scan.
func TestTenantIsolation_DDB_SEC_02(t *testing.T) {
	t.Parallel()
	got := planExample(t, "example")
	var tenantPolicy, trust any
	require.NoError(t, json.Unmarshal([]byte(got.policies["tenant"]), &tenantPolicy))
	require.NoError(t, json.Unmarshal([]byte(got.trust["tenant"]), &trust))

	m := &matrix{
		principal: "arn:aws:sts::" + accountID + ":assumed-role/dev-example-dynamodb-tenant/t1-session",
		policy:    tenantPolicy,
		tags:      map[string]any{"aws:PrincipalTag/tenant_id": "t1"},
	}
	own, prod, gsi1, gsi2 := tableARN("dev", "order"), tableARN("prod", "order"), tableARN("dev", "order")+"/index/gsi1", tableARN("dev", "order")+"/index/gsi2"
	untagged := map[string]any{"aws:PrincipalTag/tenant_id": nil}

	for _, a := range []string{"GetItem", "BatchGetItem", "Query", "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "ConditionCheckItem"} {
		action := "dynamodb:" + a
		m.add(a, "own TENANT#t1", allowed, action, own, keysOf("TENANT#t1"))
		m.add(a, "other TENANT#t2", denied, action, own, keysOf("TENANT#t2"))
		m.add(a, "t1 vs TENANT#t10", denied, action, own, keysOf("TENANT#t10"))
		m.add(a, "prod table", denied, action, prod, keysOf("TENANT#t1"))
		m.add(a, "untagged session", denied, action, own, merge(keysOf("TENANT#t1"), untagged))
		m.add(a, "no LeadingKeys", denied, action, own, nil)
		if strings.HasPrefix(a, "Batch") {
			m.add(a, "batch t1+t2", denied, action, own, keysOf("TENANT#t1", "TENANT#t2"))
		}
	}
	// gsi1's partition key carries the status after the tenant id.
	m.add("Query gsi1", "own TENANT#t1", allowed, "dynamodb:Query", gsi1, keysOf("TENANT#t1#STATUS#open"))
	m.add("Query gsi1", "other TENANT#t2", denied, "dynamodb:Query", gsi1, keysOf("TENANT#t2#STATUS#open"))
	m.add("Query gsi1", "t1 vs TENANT#t10", denied, "dynamodb:Query", gsi1, keysOf("TENANT#t10#STATUS#open"))
	m.add("Query gsi1", "prod table", denied, "dynamodb:Query", tableARN("prod", "order")+"/index/gsi1", keysOf("TENANT#t1#STATUS#open"))
	m.add("Query gsi1", "untagged session", denied, "dynamodb:Query", gsi1, merge(keysOf("TENANT#t1#STATUS#open"), untagged))
	m.add("Query gsi1", "no LeadingKeys", denied, "dynamodb:Query", gsi1, nil)
	// gsi2 is keyed by the tenant key itself.
	m.add("Query gsi2", "own TENANT#t1", allowed, "dynamodb:Query", gsi2, keysOf("TENANT#t1"))
	m.add("Query gsi2", "other TENANT#t2", denied, "dynamodb:Query", gsi2, keysOf("TENANT#t2"))
	m.add("Query gsi2", "t1 vs TENANT#t10", denied, "dynamodb:Query", gsi2, keysOf("TENANT#t10"))
	m.add("Query gsi2", "prod table", denied, "dynamodb:Query", tableARN("prod", "order")+"/index/gsi2", keysOf("TENANT#t1"))
	m.add("Query gsi2", "untagged session", denied, "dynamodb:Query", gsi2, merge(keysOf("TENANT#t1"), untagged))
	// The table's partition key is exactly TENANT#<id>: the index pattern does not leak onto it.
	m.add("GetItem", "t1 vs TENANT#t1#x", denied, "dynamodb:GetItem", own, keysOf("TENANT#t1#x"))
	m.add("Scan", "own table", explicit, "dynamodb:Scan", own, nil)
	m.add("Scan", "own gsi1", explicit, "dynamodb:Scan", gsi1, nil)
	m.add("PartiQLSelect", "own table", explicit, "dynamodb:PartiQLSelect", own, nil)

	// The trust policy: AssumeRole and TagSession need the tenant tag, without
	// the key delimiter or a wildcard in it.
	caller := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": []string{"sts:AssumeRole", "sts:TagSession"}, "Resource": "*"}}}
	roleARN := "arn:aws:iam::" + accountID + ":role/dev-example-dynamodb-tenant"
	tm := &matrix{principal: "arn:aws:iam::" + accountID + ":role/dev-example-tenant-api", policy: caller}
	for _, a := range []string{"sts:AssumeRole", "sts:TagSession"} {
		tag := func(v string) map[string]any {
			return map[string]any{"aws:RequestTag/tenant_id": v, "aws:TagKeys": []string{"tenant_id"}}
		}
		tm.add(a, "tag t1", allowed, a, roleARN, tag("t1"))
		tm.add(a, "no tag", denied, a, roleARN, nil)
		tm.add(a, "tag t1#x", denied, a, roleARN, tag("t1#x"))
		tm.add(a, "tag *", denied, a, roleARN, tag("*"))
	}
	for i := range tm.cells {
		tm.cells[i].sim.ResourcePolicy = trust
	}
	other := &matrix{principal: "arn:aws:iam::" + accountID + ":role/dev-someone-else", policy: caller}
	other.add("sts:AssumeRole", "untrusted principal", denied, "sts:AssumeRole", roleARN, map[string]any{"aws:RequestTag/tenant_id": "t1", "aws:TagKeys": []string{"tenant_id"}})
	other.cells[0].sim.ResourcePolicy = trust

	cells := append(append(m.cells, tm.cells...), other.cells...)
	evaluate(t, cells)
	report(t, "tenant role (session tag tenant_id=t1) and its trust policy", cells)
}

// TestRoleBoundaries_DDB_SEC_01 evaluates the other roles the same way.
func TestRoleBoundaries_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	got := planExample(t, "example")
	var cells []cell
	for _, role := range []struct {
		name  string
		cases func(m *matrix)
	}{
		{"application", func(m *matrix) {
			m.add("application", "GetItem own table", allowed, "dynamodb:GetItem", tableARN("dev", "order"), keysOf("TENANT#t1"))
			m.add("application", "PutItem own table", allowed, "dynamodb:PutItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("application", "Query own gsi1", allowed, "dynamodb:Query", tableARN("dev", "order")+"/index/gsi1", keysOf("x"))
			m.add("application", "Scan own table", denied, "dynamodb:Scan", tableARN("dev", "order"), nil)
			m.add("application", "GetItem table not its own", denied, "dynamodb:GetItem", tableARN("dev", "session"), keysOf("s1"))
			m.add("application", "GetItem prod table", denied, "dynamodb:GetItem", tableARN("prod", "order"), keysOf("TENANT#t1"))
			m.add("application", "DeleteTable own table", denied, "dynamodb:DeleteTable", tableARN("dev", "order"), nil)
		}},
		{"investigator", func(m *matrix) {
			m.add("investigator", "GetItem dev table", allowed, "dynamodb:GetItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("investigator", "Query dev gsi1", allowed, "dynamodb:Query", tableARN("dev", "order")+"/index/gsi1", keysOf("x"))
			m.add("investigator", "PutItem dev table", denied, "dynamodb:PutItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("investigator", "Scan dev table", denied, "dynamodb:Scan", tableARN("dev", "user"), nil)
			m.add("investigator", "GetItem prod table", denied, "dynamodb:GetItem", tableARN("prod", "user"), keysOf("u1"))
		}},
		{"data-patch", func(m *matrix) {
			m.add("data-patch", "PutItem dev table", allowed, "dynamodb:PutItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("data-patch", "UpdateItem dev table", allowed, "dynamodb:UpdateItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("data-patch", "DeleteItem dev table", denied, "dynamodb:DeleteItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("data-patch", "BatchWriteItem dev table", denied, "dynamodb:BatchWriteItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("data-patch", "PutItem prod table", denied, "dynamodb:PutItem", tableARN("prod", "user"), keysOf("u1"))
		}},
		{"dynops-operator", func(m *matrix) {
			m.add("dynops-operator", "ListTables", allowed, "dynamodb:ListTables", "*", nil)
			m.add("dynops-operator", "DescribeTable dev table", allowed, "dynamodb:DescribeTable", tableARN("dev", "user"), nil)
			m.add("dynops-operator", "DescribeContinuousBackups dev table", allowed, "dynamodb:DescribeContinuousBackups", tableARN("dev", "user"), nil)
			m.add("dynops-operator", "DescribeTable prod table", denied, "dynamodb:DescribeTable", tableARN("prod", "user"), nil)
			// pitr repair and the dr canary read items; only in this env's tables.
			m.add("dynops-operator", "GetItem dev table", allowed, "dynamodb:GetItem", tableARN("dev", "user"), keysOf("u1"))
			m.add("dynops-operator", "GetItem prod table", denied, "dynamodb:GetItem", tableARN("prod", "user"), keysOf("u1"))
			m.add("dynops-operator", "DescribeTable dev table in another region (dr)", allowed, "dynamodb:DescribeTable", strings.Replace(tableARN("dev", "user"), ":"+region+":", ":eu-central-1:", 1), nil)
			m.add("dynops-operator", "DeleteTable dev table", denied, "dynamodb:DeleteTable", tableARN("dev", "user"), nil)
			// The env tags are the protection dynops reads: set on a table
			// without one (just restored or imported), never changed or removed.
			envKeys := map[string]any{"aws:TagKeys": []string{"env"}}
			m.add("dynops-operator", "TagResource dynops checkpoint tag", allowed, "dynamodb:TagResource", tableARN("dev", "user"), map[string]any{"aws:TagKeys": []string{"dynops:applied-through"}, "aws:ResourceTag/env": "dev"})
			m.add("dynops-operator", "TagResource env on a table without one", allowed, "dynamodb:TagResource", tableARN("dev", "user"), envKeys)
			m.add("dynops-operator", "TagResource env over an existing env tag", denied, "dynamodb:TagResource", tableARN("dev", "user"), map[string]any{"aws:TagKeys": []string{"env"}, "aws:ResourceTag/env": "prod"})
			m.add("dynops-operator", "TagResource Environment over an existing environment tag", denied, "dynamodb:TagResource", tableARN("dev", "user"), map[string]any{"aws:TagKeys": []string{"Environment"}, "aws:ResourceTag/environment": "prod"})
			m.add("dynops-operator", "TagResource env among other keys over an existing env tag", denied, "dynamodb:TagResource", tableARN("dev", "user"), map[string]any{"aws:TagKeys": []string{"team", "ENV"}, "aws:ResourceTag/env": "prod"})
			m.add("dynops-operator", "UntagResource env", denied, "dynamodb:UntagResource", tableARN("dev", "user"), envKeys)
			m.add("dynops-operator", "UntagResource any tag (the operator removes none)", denied, "dynamodb:UntagResource", tableARN("dev", "user"), map[string]any{"aws:TagKeys": []string{"dynops:applied-through"}})
			// check --to-security-hub: resource types from the Service Authorization
			// Reference (the evaluator's iam-data): BatchImportFindings on a
			// product, GetFindings on the hub. No BatchUpdateFindings: on the hub it
			// reaches every product's findings (suppress GuardDuty's, lower a control's).
			shub := "arn:aws:securityhub:" + region + ":" + accountID + ":"
			m.add("dynops-operator", "BatchImportFindings own default product", allowed, "securityhub:BatchImportFindings", shub+"product/"+accountID+"/default", nil)
			m.add("dynops-operator", "BatchImportFindings another product", denied, "securityhub:BatchImportFindings", shub+"product/"+accountID+"/other", nil)
			m.add("dynops-operator", "GetFindings hub", allowed, "securityhub:GetFindings", shub+"hub/default", nil)
			m.add("dynops-operator", "BatchUpdateFindings hub (suppress any product's findings)", denied, "securityhub:BatchUpdateFindings", shub+"hub/default", nil)
			m.add("dynops-operator", "BatchImportFindings GuardDuty's product", denied, "securityhub:BatchImportFindings", shub+"product/aws/guardduty", nil)
			// dr drill --pause-replication: the env's FIS template only (modules/dr's), in any region.
			fisARN := "arn:aws:fis:eu-central-1:" + accountID + ":"
			m.add("dynops-operator", "StartExperiment env template", allowed, "fis:StartExperiment", fisARN+"experiment-template/"+fisTemplateID, nil)
			m.add("dynops-operator", "StartExperiment another template", denied, "fis:StartExperiment", fisARN+"experiment-template/EXTother0001", nil)
			m.add("dynops-operator", "StopExperiment", allowed, "fis:StopExperiment", fisARN+"experiment/EXPabc123", nil)
			m.add("dynops-operator", "CreateExperimentTemplate", denied, "fis:CreateExperimentTemplate", fisARN+"experiment-template/EXTnew0001", nil)
			m.add("dynops-operator", "UpdateExperimentTemplate env template", denied, "fis:UpdateExperimentTemplate", fisARN+"experiment-template/"+fisTemplateID, nil)
			m.add("dynops-operator", "BatchImportFindings in another account", denied, "securityhub:BatchImportFindings", "arn:aws:securityhub:"+region+":210987654321:product/210987654321/default", nil)
		}},
	} {
		var policy any
		require.NoError(t, json.Unmarshal([]byte(got.policies[role.name]), &policy), role.name)
		m := &matrix{principal: "arn:aws:sts::" + accountID + ":assumed-role/dev-example-dynamodb-" + role.name + "/s", policy: policy}
		role.cases(m)
		for _, c := range m.cells {
			// One row per request: the roles ask different questions.
			c.row, c.col = c.row+": "+c.col, "decision"
			cells = append(cells, c)
		}
	}
	evaluate(t, cells)
	report(t, "application, investigator, data-patch, dynops-operator", cells)
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// report prints the matrix (rows x columns, each cell the evaluator's
// decision) and fails for every cell that got the wrong decision.
func report(t *testing.T, title string, cells []cell) {
	t.Helper()
	var rows, cols []string
	grid := map[string]map[string]string{}
	for _, c := range cells {
		if grid[c.row] == nil {
			grid[c.row] = map[string]string{}
			rows = append(rows, c.row)
		}
		if !slices.Contains(cols, c.col) {
			cols = append(cols, c.col)
		}
		mark := ""
		if !c.ok() {
			mark = " WRONG"
		}
		grid[c.row][c.col] = short(c.got.OverallResult) + mark
	}
	var b strings.Builder
	fmt.Fprintf(&b, "IAM evaluator matrix: %s (%d cells; ALLOW, deny = implicit, DENY! = explicit deny)\n", title, len(cells))
	first := 0
	for _, r := range rows {
		first = max(first, len(r))
	}
	fmt.Fprintf(&b, "%-*s", first, "")
	for _, c := range cols {
		fmt.Fprintf(&b, " | %s", c)
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s", first, r)
		for _, c := range cols {
			v := grid[r][c]
			if v == "" {
				v = "-"
			}
			fmt.Fprintf(&b, " | %-*s", len(c), v)
		}
		b.WriteString("\n")
	}
	t.Log("\n" + b.String())
	for _, c := range cells {
		if c.got.Errors != "" {
			t.Errorf("%s / %s: the evaluator refused the request: %s", c.row, c.col, c.got.Errors)
			continue
		}
		if !c.ok() {
			t.Errorf("%s / %s: want %s, the evaluator says %s", c.row, c.col, c.want, c.got.OverallResult)
		}
	}
}

func short(r string) string {
	switch r {
	case allowed:
		return "ALLOW"
	case implicit:
		return "deny"
	case explicit:
		return "DENY!"
	}
	return "error"
}

// allowedDelimiters are the index-key delimiters the module accepts: the
// characters a tag value cannot hold (tag values hold letters, digits, spaces
// and _ . : / = + - @), without IAM's wildcards and variables (* ? $).
// tenantTables is one tenant table per accepted delimiter.
func tenantTables() map[string]any {
	tables := map[string]any{}
	for i, d := range allowedDelimiters {
		tables[tenantTableName(i)] = map[string]any{"key_prefix": "TENANT#", "index_key_delimiter": d, "cross_tenant_indexes": map[string]any{"gsi3": "operations across tenants"}}
	}
	return tables
}

func tenantTableName(i int) string { return fmt.Sprintf("dev-example-t%02d", i) }

var allowedDelimiters = []string{"#", "|", "~", "!", "%", "^", "&", ",", ";", "<", ">", "(", ")", "{", "}", "[", "]"}

// tagChars are characters a tag value may hold: a tenant id may continue
// with any of them, so "acme" must never reach "acme<c>eu".
var tagChars = []string{"-", "_", ".", ":", "/", "=", "+", "@", " ", "1", "x", "Z"}

// TestIndexKeyAndDelimiterIsolation_DDB_SEC_02: one tenant table per accepted
// delimiter, planned through the module, evaluated by the real IAM evaluator:
// tenant acme reaches its own composite index keys and never a tenant whose
// id extends "acme" by any character a tag can hold; a session tag carrying
// the delimiter or a wildcard is refused by the permission policy itself (no
// trust policy involved: the env roots attach the policy without the
// module's roles); the cross-tenant index is denied outright; and IAM cannot
// see an item's index keys (the injection cell), which is why the plan-time
// rule keys every tenant-scoped GSI by the tenant key.
func TestIndexKeyAndDelimiterIsolation_DDB_SEC_02(t *testing.T) {
	t.Parallel()
	name := tenantTableName
	docs := planCasePolicies(t, "tenant tables")
	policy := policyOf(t, docs, `aws_iam_policy.this["tenant"]`)

	var cells []cell
	for i, d := range allowedDelimiters {
		table := fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", region, accountID, name(i))
		gsi1, gsi3 := table+"/index/gsi1", table+"/index/gsi3"
		m := &matrix{principal: "arn:aws:sts::" + accountID + ":assumed-role/dev-example-dynamodb-tenant/acme", policy: policy, tags: map[string]any{"aws:PrincipalTag/tenant_id": "acme"}}
		row := "delimiter " + strconv.Quote(d)
		m.add(row, "own TENANT#acme", allowed, "dynamodb:GetItem", table, keysOf("TENANT#acme"))
		m.add(row, "own index key", allowed, "dynamodb:Query", gsi1, keysOf("TENANT#acme"+d+"STATUS"+d+"open"))
		m.add(row, "index key acme<d><d>", allowed, "dynamodb:Query", gsi1, keysOf("TENANT#acme"+d+d))
		for _, c := range tagChars {
			m.add(row, "acme"+c+"eu index", denied, "dynamodb:Query", gsi1, keysOf("TENANT#acme"+c+"eu"+d+"STATUS"))
		}
		m.add(row, "table key acme<d>x", denied, "dynamodb:PutItem", table, keysOf("TENANT#acme"+d+"x"))
		m.add(row, "tag acme<d>x", explicit, "dynamodb:Query", gsi1, merge(keysOf("TENANT#acme"+d+"x"+d+"STATUS"), map[string]any{"aws:PrincipalTag/tenant_id": "acme" + d + "x"}))
		m.add(row, "tag *", explicit, "dynamodb:GetItem", table, merge(keysOf("TENANT#*"), map[string]any{"aws:PrincipalTag/tenant_id": "*"}))
		m.add(row, "tag empty", explicit, "dynamodb:GetItem", table, merge(keysOf("TENANT#"), map[string]any{"aws:PrincipalTag/tenant_id": ""}))
		m.add(row, "cross-tenant gsi3 own key", explicit, "dynamodb:Query", gsi3, keysOf("TENANT#acme"))
		// IAM sees only the partition key a request names: a PutItem keyed by
		// the tenant's own key is allowed whatever the item's GSI attributes
		// say. The defence is DDB-SEC-02's plan-time rule (GSIs keyed by the
		// tenant key: TestIndexKeyInjectionRefused_DDB_SEC_02, dynops check).
		m.add(row, "injection: own key, other's GSI key", allowed, "dynamodb:PutItem", table, merge(keysOf("TENANT#acme"), map[string]any{"dynamodb:Attributes": []string{"tenant_key", "tenant_status"}}))
		cells = append(cells, m.cells...)
	}
	evaluate(t, cells)
	report(t, fmt.Sprintf("tenant acme: %d accepted delimiters x index keys, tenant ids extended by tag characters, tag guards in the permission policy, cross-tenant index", len(allowedDelimiters)), cells)
}

// TestOneTrustPerRole_DDB_SEC_01: each role trusts its own principals. Every
// principal the tenant role trusts (read from the planned trust policy, so on
// a module with one shared list it is the application's caller too) asks to
// assume every other role, with the tenant tag and with MFA: each is denied.
// The other roles' callers cannot assume the tenant role, and each role's own
// caller still can (with MFA for break-glass).
func TestOneTrustPerRole_DDB_SEC_01(t *testing.T) {
	t.Parallel()
	got := planExample(t, "example")
	caller := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": []string{"sts:AssumeRole", "sts:TagSession"}, "Resource": "*"}}}
	principalsOf := func(role string) []string {
		var doc struct {
			Statement []struct {
				Principal struct {
					AWS any `json:"AWS"`
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(got.trust[role]), &doc), "trust of %s", role)
		var out []string
		for _, s := range doc.Statement {
			switch v := s.Principal.AWS.(type) {
			case string:
				out = append(out, v)
			case []any:
				for _, p := range v {
					out = append(out, p.(string))
				}
			}
		}
		require.NotEmpty(t, out, "the %s role trusts no principal", role)
		return out
	}
	tenantCallers := principalsOf("tenant")
	session := map[string]any{"aws:RequestTag/tenant_id": "t1", "aws:TagKeys": []string{"tenant_id"}, "aws:MultiFactorAuthPresent": "true"}
	var cells []cell
	for _, role := range keys(got.trust) {
		var trust any
		require.NoError(t, json.Unmarshal([]byte(got.trust[role]), &trust))
		roleARN := "arn:aws:iam::" + accountID + ":role/dev-example-dynamodb-" + role
		add := func(from, col, want string) {
			m := &matrix{principal: from, policy: caller}
			m.add(role, col, want, "sts:AssumeRole", roleARN, session)
			m.cells[0].sim.ResourcePolicy = trust
			cells = append(cells, m.cells[0])
		}
		for _, p := range principalsOf(role) {
			add(p, "own caller", allowed)
		}
		if role == "tenant" {
			for _, other := range keys(got.trust) {
				if other == "tenant" {
					continue
				}
				for _, p := range principalsOf(other) {
					add(p, other+" caller", denied)
				}
			}
			continue
		}
		for _, p := range tenantCallers {
			add(p, "tenant caller", denied)
		}
	}
	require.Greater(t, len(cells), 10)
	evaluate(t, cells)
	report(t, "sts:AssumeRole of each role: its own callers only; a tenant caller reaches no other role", cells)
}
