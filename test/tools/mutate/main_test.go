package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHCLStringEnd: the message of a validation ends at its closing quote,
// not at a quote inside an interpolation (the stack's DDB-EXC-01 message
// joins quoted strings inside ${...}); escapes and $${ are text.
func TestHCLStringEnd(t *testing.T) {
	for src, want := range map[string]string{
		`"plain" rest`:                                   `"plain"`,
		`"a \"quoted\" word" rest`:                       `"a \"quoted\" word"`,
		`"x ${join("; ", ["a", "b"])} y" rest`:           `"x ${join("; ", ["a", "b"])} y"`,
		`"${[for k in v : "k \"${k}\"" if k != "}"]}" z`: `"${[for k in v : "k \"${k}\"" if k != "}"]}"`,
		`"$${literal} and %%{literal}" z`:                `"$${literal} and %%{literal}"`,
		`"%{ if a }x%{ endif }" z`:                       `"%{ if a }x%{ endif }"`,
		`"{ gsi3 = \"why\" }." z`:                        `"{ gsi3 = \"why\" }."`,
	} {
		end := hclStringEnd(src, 0)
		if end < 0 || src[:end] != want {
			t.Errorf("hclStringEnd(%s) = %d, want the string %s", src, end, want)
		}
	}
	if end := hclStringEnd(`"never ${ "ends" `, 0); end != -1 {
		t.Errorf("an unterminated template: got %d, want -1", end)
	}
}

// TestTerraformMutantsParse: every Terraform mutant is valid HCL, so that a
// test failing on it fails for the break, not for a syntax error (which the
// judge would report as NOT JUDGED, never as killed).
func TestTerraformMutantsParse(t *testing.T) {
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform not on PATH")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tfMutants(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no Terraform mutant")
	}
	// One terraform fmt over all of them (it fails only on syntax errors
	// with -write=false -list=false); each file is named by its index.
	dir := t.TempDir()
	for i, m := range ms {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("mutant_%03d.tf", i)), []byte(m.Mutated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("terraform", "fmt", "-no-color", "-write=false", "-list=false", dir).CombinedOutput(); err != nil {
		t.Errorf("a Terraform mutant is not valid HCL (mutant_NNN.tf is the NNNth of -list): %v\n%s", err, out)
	}
	t.Logf("%d Terraform mutants parse", len(ms))
}

// TestSelectCases: a validation's mutant gets the cases named for its rule
// that its own block refused in the baseline, and no other; the regexp the
// harness receives matches exactly those names, metacharacters and all.
func TestSelectCases(t *testing.T) {
	m := Mutant{Validation: "modules/t/variables.tf:9", CaseRe: regexp.MustCompile(`^DDB-NAME-01[ _]`)}
	reports := []refusalReport{
		{Case: "DDB-NAME-01 env not allowed", Rules: []string{"modules/t/variables.tf:9"}},
		{Case: "DDB-NAME-01 usage (bug 6) [x]", Rules: []string{"modules/t/variables.tf:40", "modules/t/variables.tf:9"}},
		{Case: "DDB-NAME-01 product", Rules: []string{"modules/t/variables.tf:30"}},         // another block of the rule
		{Case: "DDB-NAME-011 other", Rules: []string{"modules/t/variables.tf:9"}},           // another rule's name
		{Case: "DDB-PITR-01 refused here too", Rules: []string{"modules/t/variables.tf:9"}}, // named for another rule
		{Case: "DDB-NAME-01 env not allowed", Rules: []string{"modules/t/variables.tf:9"}},  // a second call's same name
		{Case: "DDB-NAME-01 in a child", Rules: []string{"modules/other/variables.tf:9"}},   // same line, other file
		{Case: "DDB-NAME-01 a precondition", Rules: []string{}},                             // no validation block
	}
	got := selectCases(m, reports)
	want := []string{"DDB-NAME-01 env not allowed", "DDB-NAME-01 usage (bug 6) [x]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("selectCases = %q, want %q", got, want)
	}
	re := regexp.MustCompile(casesRe(got))
	for _, r := range reports {
		if sel := re.MatchString(r.Case); sel != slices.Contains(want, r.Case) {
			t.Errorf("casesRe %s matches %q: %v", re, r.Case, sel)
		}
	}
}
