package adopt

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/adopt"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestAdoptShowsBothForms(t *testing.T) {
	res := &adopt.Result{
		Table: "prod-hoge-user", Usage: "user",
		Entry:      map[string]any{"hash_key": "pk"},
		Imports:    []adopt.Import{{To: `module.stack.module.table["user"].aws_dynamodb_table.this`, ID: "prod-hoge-user"}},
		Deviations: []adopt.Deviation{{Rule: "DDB-PITR-01", Detail: "point-in-time recovery is off"}},
	}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		return output(f, &Options{}, res)
	})
	for _, want := range []string{"# envs/tables.yaml entry for prod-hoge-user", "hash_key: pk", "# Terraform import blocks", "aws_dynamodb_table.this", "DDB-PITR-01"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	imports, _ := doc["imports"].([]any)
	devs, _ := doc["deviations"].([]any)
	if doc["table"] != "prod-hoge-user" || doc["usage"] != "user" || doc["entry"] == nil || len(imports) != 1 || len(devs) != 1 {
		t.Errorf("JSON view: %v; want table, usage, entry, the import and the deviation", doc)
	}
}
