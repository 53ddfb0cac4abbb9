package list

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestListShowsBothForms(t *testing.T) {
	human, doc := viewtest.Forms[[]map[string]any](t, nil, func(f *factory.Factory) error { return Run(f) })
	if !strings.Contains(human, "NAME") || !strings.Contains(human, "pitr-restore") || !strings.Contains(human, "Run one: dynops runbook run NAME") {
		t.Errorf("human view lacks the table header or a runbook:\n%s", human)
	}
	names := map[any]bool{}
	for _, rb := range doc {
		names[rb["name"]] = rb["steps"] != nil && rb["title"] != ""
	}
	if len(doc) < 5 || !names["pitr-restore"] {
		t.Errorf("JSON view: %v; want every runbook with its name, title and steps", doc)
	}
}
