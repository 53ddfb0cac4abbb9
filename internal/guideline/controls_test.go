package guideline

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/guideline.md's generated sections")

const (
	guidelineDoc  = "../../docs/guideline.md"
	controlsBegin = "<!-- controls:begin -->\n"
	controlsEnd   = "<!-- controls:end -->"
)

// docRuleIDs returns the rule IDs of the guideline's ### headings, in order.
func docRuleIDs(t *testing.T, doc string) []string {
	t.Helper()
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^### (DDB-[A-Z]+-[0-9]+)$`).FindAllStringSubmatch(doc, -1) {
		ids = append(ids, m[1])
	}
	if len(ids) < 30 {
		t.Fatalf("found %d rule headings in %s; the heading format changed", len(ids), guidelineDoc)
	}
	return ids
}

// TestControlsDoc: docs/guideline.md maps every rule (or says it has no
// external equivalent), and its table is the one generated from controlMappings.
func TestControlsDoc(t *testing.T) {
	raw, err := os.ReadFile(guidelineDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	ids := docRuleIDs(t, doc)
	begin, end := strings.Index(doc, controlsBegin), strings.Index(doc, controlsEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no %q ... %q section", guidelineDoc, controlsBegin, controlsEnd)
	}
	want := ControlsMarkdown(ids)
	got := doc[begin+len(controlsBegin) : end]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(guidelineDoc, []byte(doc[:begin+len(controlsBegin)]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's external controls table is stale; run go test ./internal/guideline -run TestControlsDoc -update\n got:\n%s\nwant:\n%s", guidelineDoc, got, want)
}

// TestControlMappings: every mapping names a rule of the guideline, once,
// with controls, a relation and a note; IDs have their framework's shape.
func TestControlMappings(t *testing.T) {
	raw, err := os.ReadFile(guidelineDoc)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, id := range docRuleIDs(t, string(raw)) {
		known[id] = true
	}
	shape := map[string]*regexp.Regexp{
		SecurityHub: regexp.MustCompile(`^DynamoDB\.[0-9]+$`),
		AWSConfig:   regexp.MustCompile(`^dynamodb(-[a-z]+)+$`),
		Checkov:     regexp.MustCompile(`^CKV2?_AWS_[0-9]+$`),
		Trivy:       regexp.MustCompile(`^AVD-AWS-[0-9]{4}$`),
		Prowler:     regexp.MustCompile(`^dynamodb(_[a-z]+)+$`),
	}
	seen := map[string]bool{}
	for _, m := range ControlMappings() {
		if !known[m.Rule] {
			t.Errorf("mapping of %s: no such rule in %s", m.Rule, guidelineDoc)
		}
		if seen[m.Rule] {
			t.Errorf("%s mapped twice", m.Rule)
		}
		seen[m.Rule] = true
		if len(m.Controls) == 0 || m.Note == "" {
			t.Errorf("%s: a mapping needs controls and a note", m.Rule)
		}
		switch m.Relation {
		case Stricter, Looser, Related:
		default:
			t.Errorf("%s: relation %q", m.Rule, m.Relation)
		}
		for _, c := range m.Controls {
			re, ok := shape[c.Framework]
			if !ok {
				t.Errorf("%s: unknown framework %q", m.Rule, c.Framework)
				continue
			}
			if !re.MatchString(c.ID) || c.Title == "" || c.Source == "" {
				t.Errorf("%s: control %+v: bad ID for %s, or no title/source", m.Rule, c, c.Framework)
			}
		}
	}
	// Security Hub DynamoDB.5 was not confirmed: it must not appear.
	for _, m := range ControlMappings() {
		for _, c := range m.Controls {
			if c.Framework == SecurityHub && c.ID == "DynamoDB.5" {
				t.Errorf("DynamoDB.5 is mapped but was never confirmed")
			}
		}
	}
}

// TestFindingsCarryControls: Evaluate puts a rule's controls and the
// resource's ARN on every finding, for the table, an index and a replica.
func TestFindingsCarryControls(t *testing.T) {
	arn := "arn:aws:dynamodb:us-east-1:123456789012:table/prod-hoge-user"
	cases := map[string]string{
		"prod-hoge-user":                arn,
		"prod-hoge-user/index/gsi1":     arn + "/index/gsi1",
		"prod-hoge-user@eu-west-1":      "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user",
		"prod-hoge-user/consumer/fn":    arn,
		"prod-hoge-user@bad/index/gsi1": arn, // not an index of this table's name form
	}
	for res, want := range cases {
		if got := ResourceARN(arn, "prod-hoge-user", res); got != want {
			t.Errorf("ResourceARN(%s) = %s, want %s", res, got, want)
		}
	}
	if got := ResourceARN("", "prod-hoge-user", "prod-hoge-user"); got != "" {
		t.Errorf("no table ARN read: got %q, want empty (never invent an ARN)", got)
	}
	if ids := ControlIDs(Pitr01); len(ids) == 0 || ids[0] != "AWS Security Hub DynamoDB.2" {
		t.Errorf("ControlIDs(PITR-01) = %v", ids)
	}
	if ControlsOf(Name01) != nil {
		t.Errorf("DDB-NAME-01 has no external equivalent")
	}
}

// TestRuleHelp: every rule dynops checks has its guideline section as help
// text (the SARIF rules' help), and the section stops at the next rule.
func TestRuleHelp(t *testing.T) {
	for _, r := range Rules() {
		h := RuleHelp(r.ID)
		if len(h) < 40 {
			t.Errorf("%s: help %q: no guideline section", r.ID, h)
		}
		if strings.Contains(h, "### ") || strings.Contains(h, "\n") {
			t.Errorf("%s: help runs past its section: %q", r.ID, h)
		}
	}
	if !strings.HasPrefix(RuleHelp(Pitr01), "(default/guard) PITR on with a 35-day recovery period") {
		t.Errorf("PITR-01 help = %q", RuleHelp(Pitr01))
	}
	if RuleHelp("DDB-NOPE-01") != "" {
		t.Errorf("unknown rule has help")
	}
}

// TestFindingKeyIsOnePerResource: two stream consumers of one table are
// located by the table's ARN but keep keys of their own.
func TestFindingKeyIsOnePerResource(t *testing.T) {
	arn := "arn:aws:dynamodb:us-east-1:123456789012:table/t-a-b"
	keys := map[string]string{}
	for _, res := range []string{"t-a-b", "t-a-b/index/gsi1", "t-a-b@eu-west-1", "t-a-b/consumer/fn1", "t-a-b/consumer/fn2"} {
		f := Finding{Table: "t-a-b", Resource: res, ARN: ResourceARN(arn, "t-a-b", res)}
		k := f.Key()
		if other, dup := keys[k]; dup {
			t.Errorf("%s and %s share key %s", res, other, k)
		}
		keys[k] = res
	}
	if got := (Finding{Table: "t-a-b", Resource: "t-a-b/consumer/fn1", ARN: arn}).Key(); got != arn+"/consumer/fn1" {
		t.Errorf("consumer key %s", got)
	}
	if got := (Finding{Table: "t-a-b", Resource: "t-a-b/index/gsi1", ARN: arn + "/index/gsi1"}).Key(); got != arn+"/index/gsi1" {
		t.Errorf("index key %s", got)
	}
	if got := (Finding{Table: "t-a-b", Resource: "t-a-b"}).Key(); got != "t-a-b" {
		t.Errorf("no ARN: key %s", got)
	}
}
