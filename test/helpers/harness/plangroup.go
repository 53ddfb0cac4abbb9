package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gruntwork-io/terratest/modules/logger"
	"github.com/gruntwork-io/terratest/modules/terraform"
)

// PlanCase is one offline plan of a PlanGroup: the root at Dir (relative to
// the repository root) with the variables Vars returns. Vars gets the test
// that first asks the group for a plan (for PlanZip and temp files).
type PlanCase struct {
	Name string
	Dir  string
	Vars func(tb testing.TB) map[string]any
}

// PlanGroup runs the offline plans of many cases in ONE terraform init, plan
// and show: a wrapper root calls each case's root as `module "case_N"`, and
// each test gets its own case's plan back, re-rooted (the case's module is
// promoted to the root, addresses lose their `module.case_N.` prefix) and
// parsed by terratest exactly as its own plan would be. The aws provider's
// schema, which every terraform command loads again (about 3 CPU-s each, and
// a plan loads it three times), is paid once per group instead of four times
// per case.
//
// A case whose root has provider blocks of its own (an example, an env root)
// keeps them, with the same harness override a plan alone gets; its backend
// block is ignored in a module call (terraform warns), as the local backend
// an offline plan alone gets stores nothing either. Such a case still starts
// its own provider processes in the plan (about 9 CPU-s instead of 18 alone).
//
// If the grouped plan fails, every case falls back to its own plan, so a
// refusal or a broken case is reported by the test that owns it, with its
// own diagnostics. A grouped plan has no root variables and no outputs (a
// wrapper root has neither): tests that read them plan alone (PlanOptions).
type PlanGroup struct {
	cases map[string]PlanCase
	order []string

	// Quiet discards terraform's output (for tests whose output is a report).
	Quiet bool

	once   sync.Once
	plans  map[string]*PlanStruct
	jsons  map[string][]byte
	failed error
}

// PlanStruct is terratest's parsed plan.
type PlanStruct = terraform.PlanStruct

// NewPlanGroup declares the cases of a package's plan tests.
func NewPlanGroup(cases ...PlanCase) *PlanGroup {
	g := &PlanGroup{cases: map[string]PlanCase{}}
	for _, c := range cases {
		if _, dup := g.cases[c.Name]; dup {
			panic("harness: plan case " + c.Name + " declared twice")
		}
		g.cases[c.Name] = c
		g.order = append(g.order, c.Name)
	}
	return g
}

// Plan returns the plan of the case named name. The first call plans every
// case of the group; the others wait for it.
func (g *PlanGroup) Plan(t *testing.T, name string) *PlanStruct {
	t.Helper()
	js := g.PlanJSON(t, name)
	if p, ok := g.plans[name]; ok {
		return p
	}
	p, err := terraform.ParsePlanJSON(string(js))
	if err != nil {
		t.Fatalf("parsing the plan of case %s: %v", name, err)
	}
	return p
}

// PlanJSON is Plan as `terraform show -json` output (re-rooted when grouped).
func (g *PlanGroup) PlanJSON(t *testing.T, name string) []byte {
	t.Helper()
	c, ok := g.cases[name]
	if !ok {
		t.Fatalf("harness: no plan case %q in the group (declared: %s)", name, strings.Join(g.order, ", "))
	}
	g.once.Do(func() { g.planAll(t) })
	if js, ok := g.jsons[name]; ok {
		return js
	}
	return g.planAlone(t, c)
}

// planAlone plans one case in its own root, as PlanOptions does.
func (g *PlanGroup) planAlone(t *testing.T, c PlanCase) []byte {
	t.Helper()
	if g.failed != nil {
		t.Logf("the grouped plan failed, planning case %s alone: %v", c.Name, g.failed)
	}
	// The variables go in a .tfvars.json file: terratest's -var quoting
	// breaks on JSON strings such as filter patterns.
	opts := PlanOptions(t, c.Dir, nil)
	if vars := c.Vars(t); len(vars) > 0 {
		b, err := json.Marshal(vars)
		if err != nil {
			t.Fatalf("encoding the variables of plan case %s: %v", c.Name, err)
		}
		f := filepath.Join(t.TempDir(), "case.tfvars.json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatalf("writing the variables of plan case %s: %v", c.Name, err)
		}
		opts.VarFiles = []string{f}
	}
	if g.Quiet {
		opts.Logger = logger.Discard
	}
	return []byte(terraform.InitAndPlanAndShow(t, opts))
}

// PlannedTogether reports whether the case's plan came from the grouped run
// (false before the first Plan, for a case planned alone, or after the
// grouped plan failed).
func (g *PlanGroup) PlannedTogether(name string) bool {
	_, ok := g.plans[name]
	return ok
}

// metaArguments are module block arguments that cannot carry a variable.
var metaArguments = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "providers": true, "depends_on": true}

// planAll plans every groupable case in one wrapper root and keeps the
// re-rooted plans by case name (or the error).
func (g *PlanGroup) planAll(t *testing.T) {
	t.Helper()
	g.plans, g.jsons, g.failed = map[string]*PlanStruct{}, map[string][]byte{}, nil
	plans, jsons, err := g.planTogether(t)
	if err != nil {
		g.failed = err
		return
	}
	g.plans, g.jsons = plans, jsons
}

func (g *PlanGroup) planTogether(t *testing.T) (map[string]*PlanStruct, map[string][]byte, error) {
	t.Helper()
	repo := filepath.Dir(copyRoot(t, "modules"))
	wrapper := filepath.Join(repo, "zz_harness_plan_group")
	if err := os.MkdirAll(wrapper, 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating the wrapper root: %w", err)
	}
	calls := map[string]any{}
	outputs := map[string]any{}
	callOf := map[string]string{}
	needsProvider := false
	for i, name := range g.order {
		c := g.cases[name]
		dir := filepath.Join(repo, c.Dir)
		if len(providerBlocks(t, dir)) > 0 {
			writeOverride(t, dir, DefaultRegion, offlineEndpoint, true) // merged over the root's own provider blocks
		} else {
			needsProvider = true
		}
		vars := c.Vars(t)
		call := map[string]any{"source": "../" + filepath.ToSlash(c.Dir)}
		groupable := true
		for k, v := range vars {
			if metaArguments[k] {
				groupable = false
				break
			}
			call[k] = escapeTemplates(v) // the same literal values as the refusal matrices' .tftest.json
		}
		if !groupable {
			continue
		}
		id := fmt.Sprintf("case_%d", i)
		calls[id] = call
		callOf[name] = id
		// The case's outputs, passed up so that its re-rooted plan has them.
		for out, sensitive := range rootOutputs(t, dir) {
			outputs[id+outputSep+out] = map[string]any{"value": "${module." + id + "." + out + "}", "sensitive": sensitive}
		}
	}
	if len(calls) == 0 {
		return nil, nil, nil
	}
	wrapperRoot := map[string]any{"module": calls}
	if len(outputs) > 0 {
		wrapperRoot["output"] = outputs
	}
	b, err := json.MarshalIndent(wrapperRoot, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the wrapper root: %w", err)
	}
	if err := os.WriteFile(filepath.Join(wrapper, "main.tf.json"), b, 0o644); err != nil {
		return nil, nil, fmt.Errorf("writing the wrapper root: %w", err)
	}
	if needsProvider {
		writeOverride(t, wrapper, DefaultRegion, offlineEndpoint, true) // the provider of the cases without one
	}
	opts := &terraform.Options{
		TerraformDir: wrapper,
		EnvVars:      offlineEnv(t),
		NoColor:      true,
		PlanFilePath: filepath.Join(t.TempDir(), "plan.out"),
	}
	if g.Quiet {
		opts.Logger = logger.Discard
	}
	out, err := terraform.InitAndPlanAndShowE(t, opts)
	if err != nil {
		return nil, nil, err
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		return nil, nil, fmt.Errorf("decoding the grouped plan: %w", err)
	}
	plans, jsons := map[string]*PlanStruct{}, map[string][]byte{}
	for name, id := range callOf {
		js, err := json.Marshal(reroot(full, id))
		if err != nil {
			return nil, nil, fmt.Errorf("case %s: encoding its plan: %w", name, err)
		}
		p, err := terraform.ParsePlanJSON(string(js))
		if err != nil {
			return nil, nil, fmt.Errorf("case %s: parsing its plan: %w", name, err)
		}
		plans[name], jsons[name] = p, js
	}
	return plans, jsons, nil
}

// reroot returns the plan of module.<call> as if it had been the root:
// its planned values, resource changes, drift, prior state and configuration,
// with every address stripped of the module prefix.
func reroot(full map[string]any, call string) map[string]any {
	prefix := "module." + call
	out := map[string]any{}
	for _, k := range []string{"format_version", "terraform_version", "applyable", "complete", "errored", "timestamp"} {
		if v, ok := full[k]; ok {
			out[k] = v
		}
	}
	if pv, ok := full["planned_values"].(map[string]any); ok {
		child := childModule(pv["root_module"], prefix)
		out["planned_values"] = map[string]any{"root_module": child, "outputs": callOutputs(pv["outputs"], call)}
	}
	if oc, ok := full["output_changes"]; ok {
		out["output_changes"] = callOutputs(oc, call)
	}
	for _, k := range []string{"resource_changes", "resource_drift"} {
		list, _ := full[k].([]any)
		var kept []any
		for _, e := range list {
			rc, _ := e.(map[string]any)
			ma, _ := rc["module_address"].(string)
			if ma != prefix && !strings.HasPrefix(ma, prefix+".") {
				continue
			}
			kept = append(kept, stripAddresses(rc, prefix))
		}
		if kept != nil {
			out[k] = kept
		}
	}
	if ps, ok := full["prior_state"].(map[string]any); ok {
		if vals, ok := ps["values"].(map[string]any); ok {
			st := map[string]any{}
			for k, v := range ps {
				st[k] = v
			}
			st["values"] = map[string]any{"root_module": childModule(vals["root_module"], prefix)}
			out["prior_state"] = st
		}
	}
	if cfg, ok := full["configuration"].(map[string]any); ok {
		root, _ := cfg["root_module"].(map[string]any)
		calls, _ := root["module_calls"].(map[string]any)
		mc, _ := calls[call].(map[string]any)
		if mod, ok := mc["module"]; ok {
			out["configuration"] = map[string]any{"provider_config": providerConfigs(cfg["provider_config"], prefix), "root_module": mod}
		}
	}
	return out
}

// outputSep joins a case's call and the name of one of its outputs in the
// wrapper root's output names ("case_3__table_arn").
const outputSep = "__"

// outputBlock matches an output block's name, and sensitiveLine its
// `sensitive = true`.
var (
	outputBlock   = regexp.MustCompile(`(?ms)^output\s+"([^"]+)"\s*\{(.*?)^\}`)
	sensitiveLine = regexp.MustCompile(`(?m)^\s*sensitive\s*=\s*true`)
)

// rootOutputs is the outputs a root declares, each with whether it is
// sensitive (a wrapper output of a sensitive value must say so too).
func rootOutputs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	tfs, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	out := map[string]bool{}
	for _, f := range tfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, m := range outputBlock.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = sensitiveLine.MatchString(m[2])
		}
	}
	return out
}

// callOutputs are the wrapper's outputs of call, named as the case's own.
func callOutputs(all any, call string) map[string]any {
	out := map[string]any{}
	m, _ := all.(map[string]any)
	for k, v := range m {
		if name, ok := strings.CutPrefix(k, call+outputSep); ok {
			out[name] = v
		}
	}
	return out
}

// providerConfigs keeps the wrapper's own provider configurations (which a
// case without provider blocks inherits) and the case's, re-keyed as if the
// case were the root ("module.case_0:aws" becomes "aws").
func providerConfigs(all any, prefix string) map[string]any {
	out := map[string]any{}
	m, _ := all.(map[string]any)
	for k, v := range m {
		pc, _ := v.(map[string]any)
		ma, _ := pc["module_address"].(string)
		switch {
		case ma == "":
			out[k] = v
		case ma == prefix || strings.HasPrefix(ma, prefix+"."):
			cp := map[string]any{}
			for kk, vv := range pc {
				cp[kk] = vv
			}
			if ma == prefix {
				delete(cp, "module_address")
				k = strings.TrimPrefix(k, prefix+":")
			} else {
				cp["module_address"] = strings.TrimPrefix(ma, prefix+".")
				k = strings.TrimPrefix(k, prefix+".")
			}
			out[k] = cp
		}
	}
	return out
}

// childModule finds the module at address prefix among root's child modules
// and returns it as a root module (no address, addresses stripped).
func childModule(root any, prefix string) map[string]any {
	r, _ := root.(map[string]any)
	children, _ := r["child_modules"].([]any)
	for _, c := range children {
		m, _ := c.(map[string]any)
		if m["address"] == prefix {
			stripped := stripAddresses(m, prefix)
			delete(stripped, "address")
			return stripped
		}
	}
	// A case that plans no resource has no child module in the plan.
	return map[string]any{}
}

// stripAddresses copies a plan object, removing prefix from every address
// field (address, module_address, previous_address) at any depth.
func stripAddresses(v map[string]any, prefix string) map[string]any {
	out := make(map[string]any, len(v))
	for k, e := range v {
		switch k {
		case "address", "module_address", "previous_address":
			if s, ok := e.(string); ok {
				switch {
				case s == prefix:
					if k == "address" {
						out[k] = ""
					}
					continue
				case strings.HasPrefix(s, prefix+"."):
					out[k] = strings.TrimPrefix(s, prefix+".")
					continue
				}
			}
			out[k] = e
		case "resources", "child_modules":
			list, _ := e.([]any)
			cp := make([]any, len(list))
			for i, x := range list {
				if m, ok := x.(map[string]any); ok {
					cp[i] = stripAddresses(m, prefix)
				} else {
					cp[i] = x
				}
			}
			out[k] = cp
		default:
			out[k] = e
		}
	}
	return out
}
