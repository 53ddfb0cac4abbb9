package importcmd

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/tablesettings"
)

// A result is printed from what was read back, never from the plan.
func TestPrintResultClaimsOnlyWhatWasReadBack(t *testing.T) {
	planned := tablesettings.Plan(tablesettings.Settings{}, tablesettings.Guideline(map[string]string{"env": "dev"}))
	n := int64(25)
	cases := []struct {
		name    string
		res     Result
		want    []string
		mustNot []string
	}{
		{name: "FAILED import applies and claims nothing",
			res:     Result{Table: "dev-a-user", Settings: planned, SourceItems: 25, Import: &export.Import{Arn: "arn:i", Status: "FAILED", Failure: "ItemValidationError bad item", Imported: 3, Errors: 2}},
			want:    []string{"FAILED", "ItemValidationError bad item", "no setting was applied", "3 imported, 2 errors"},
			mustNot: []string{"applied ", "holds"}},
		{name: "CANCELLED import likewise",
			res:     Result{Table: "dev-a-user", Settings: planned, Import: &export.Import{Arn: "arn:i", Status: "CANCELLED"}},
			want:    []string{"CANCELLED", "failure: none", "no setting was applied"},
			mustNot: []string{"applied ", "holds"}},
		{name: "COMPLETED lists only the steps that ran, the read-back and the counted items",
			res: Result{Table: "dev-a-user", Settings: planned, Applied: planned[:1], SourceItems: 25, TableItems: &n,
				Import:   &export.Import{Arn: "arn:i", Status: "COMPLETED", Imported: 25},
				ReadBack: &tablesettings.Settings{PITR: true, RecoveryPeriodInDays: 35, DeletionProtection: false, Tags: map[string]string{"env": "dev"}}},
			want:    []string{"applied " + planned[0].What, "PITR on (35 days)", "deletion protection off", "holds 25 (counted with a Scan)"},
			mustNot: []string{"applied " + planned[len(planned)-1].What}},
		{name: "an export whose manifest says 0 items says 0, not that it has no manifest",
			res:     Result{Table: "dev-a-user", SourceItems: 0, TableItems: new(int64), Import: &export.Import{Arn: "arn:i", Status: "COMPLETED"}},
			want:    []string{"items: export 0, imported 0", "holds 0 (counted with a Scan)"},
			mustNot: []string{"no manifest"}},
		{name: "COMPLETED but not counted says so",
			res:     Result{Table: "dev-a-user", SourceItems: -1, Import: &export.Import{Arn: "arn:i", Status: "COMPLETED", Imported: 25}},
			want:    []string{"not counted", "no manifest"},
			mustNot: []string{"holds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			if err := printResult(factory.New(ios), tc.res); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.mustNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("output claims %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestPrintResultBothForms: one dry run in both forms, the plan's lines and
// the JSON document with its source, table and settings.
func TestPrintResultBothForms(t *testing.T) {
	planned := tablesettings.Plan(tablesettings.Settings{}, tablesettings.Guideline(map[string]string{"env": "dev"}))
	res := Result{DryRun: true, Source: export.Source{Bucket: "b", DataPrefix: "p/data/"}, Table: "dev-a-user", Region: "eu-west-1", Settings: planned, Applied: []tablesettings.Change{}, Verified: true}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return printResult(f, res) })
	if !strings.Contains(human, "ImportTable s3://b/p/data/ into NEW table dev-a-user in eu-west-1") || !strings.Contains(human, planned[0].What) {
		t.Errorf("human view lacks the plan:\n%s", human)
	}
	settings, _ := doc["settings"].([]any)
	if doc["dry_run"] != true || doc["table"] != "dev-a-user" || doc["verified"] != true || len(settings) != len(planned) || doc["source"] == nil {
		t.Errorf("JSON view: %v; want the dry run's table, source and planned settings", doc)
	}
}
