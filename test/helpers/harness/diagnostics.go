package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
)

// Diagnostic is one diagnostic of `terraform plan -json` (or validate -json):
// its own summary and detail, without the variable values terraform echoes
// around it in human output.
type Diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Address  string `json:"address"`
	Range    *struct {
		Filename string `json:"filename"`
		Start    struct {
			Line int `json:"line"`
		} `json:"start"`
	} `json:"range"`
}

// Message is the summary and detail, whitespace collapsed.
func (d Diagnostic) Message() string {
	return strings.Join(strings.Fields(d.Summary+" "+d.Detail), " ")
}

// PlanDiagnostics runs `terraform init` and `terraform plan -json` with
// opts and returns the plan's error diagnostics (nil when the plan
// succeeds). It fails t when terraform prints no diagnostic yet fails.
func PlanDiagnostics(t *testing.T, opts *terraform.Options) []Diagnostic {
	t.Helper()
	terraform.Init(t, opts)
	o := *opts
	o.PlanFilePath = "" // -out with -json is fine, but a failing plan writes none
	args := terraform.FormatArgs(&o, "plan", "-json", "-input=false")
	out, err := terraform.RunTerraformCommandAndGetStdoutContextE(t, context.Background(), &o, args...)
	diags := ParseDiagnostics(out)
	if err != nil && len(diags) == 0 {
		t.Fatalf("terraform plan failed without a JSON diagnostic: %v\n%s", err, out)
	}
	return diags
}

// ParseDiagnostics reads the error diagnostics from terraform's JSON lines
// (`plan -json`: one object a line with type "diagnostic") or from one
// `validate -json` document.
func ParseDiagnostics(out string) []Diagnostic {
	var diags []Diagnostic
	var doc struct {
		Diagnostics []Diagnostic `json:"diagnostics"`
	}
	if json.Unmarshal([]byte(out), &doc) == nil && doc.Diagnostics != nil {
		for _, d := range doc.Diagnostics {
			if d.Severity == "error" {
				diags = append(diags, d)
			}
		}
		return diags
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var msg struct {
			Type       string      `json:"type"`
			Diagnostic *Diagnostic `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "diagnostic" || msg.Diagnostic == nil {
			continue
		}
		if msg.Diagnostic.Severity == "error" {
			diags = append(diags, *msg.Diagnostic)
		}
	}
	return diags
}

// RequireRefusal asserts that diags hold an error whose own detail starts
// with "RULE:" (the rule ID) and contains every one of wants (the fix, the
// table's name, ...). It returns the matching diagnostic.
func RequireRefusal(t *testing.T, diags []Diagnostic, rule string, wants ...string) Diagnostic {
	t.Helper()
	if len(diags) == 0 {
		t.Fatalf("the plan succeeded; it must refuse with %s", rule)
	}
	d, seen, ok := findRefusal(diags, rule, wants)
	if !ok {
		t.Fatalf("no diagnostic starts with %q and contains %q; the plan said:\n  %s", rule+":", wants, strings.Join(seen, "\n  "))
	}
	return d
}

// findRefusal is the one matcher of refusals (RequireRefusal and
// ExpectRefusals): the error diagnostic whose own detail, whitespace
// collapsed, starts with "RULE:" and contains every want. seen lists each
// diagnostic as "summary: detail" for the failure message.
func findRefusal(diags []Diagnostic, rule string, wants []string) (match Diagnostic, seen []string, ok bool) {
	for _, d := range diags {
		detail := strings.Join(strings.Fields(d.Detail), " ")
		seen = append(seen, d.Summary+": "+detail)
		if ok || !strings.HasPrefix(detail, rule+":") {
			continue
		}
		all := true
		for _, w := range wants {
			all = all && strings.Contains(detail, strings.Join(strings.Fields(w), " "))
		}
		if all {
			match, ok = d, true
		}
	}
	return match, seen, ok
}

var ruleIDPrefix = regexp.MustCompile(`^(DDB-[A-Z]+-\d+):`)

// ruleOf is the rule ID a refusal's first wanted text starts with.
func ruleOf(wants []string) (string, bool) {
	if len(wants) == 0 {
		return "", false
	}
	m := ruleIDPrefix.FindStringSubmatch(strings.TrimSpace(wants[0]))
	if m == nil {
		return "", false
	}
	return m[1], true
}
