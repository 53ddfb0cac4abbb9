package cutover

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/migrate"
)

// TestViewBothForms: what ran, and the closing line for a person; the
// JSON document with the steps and the result, and nothing after it.
func TestViewBothForms(t *testing.T) {
	opts := &Options{Value: migrate.PointerMulti}
	opts.Source = "dev-a-single"
	res := &migrate.CutoverResult{Steps: []migrate.Step{{Name: "fence", Status: "done", Detail: "source fenced"}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		v := newView(f, opts)
		if err := v.Steps(res); err != nil {
			return err
		}
		v.CutOver()
		return nil
	})
	for _, want := range []string{"STEP", "fence", "source fenced", `Cut over: the application's pointer says "multi". Keep dev-a-single (fenced)`} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	steps, _ := doc["steps"].([]any)
	if doc["dry_run"] != false || len(steps) != 1 || doc["result"] == nil {
		t.Errorf("JSON view: %v; want the steps and the result", doc)
	}
}
