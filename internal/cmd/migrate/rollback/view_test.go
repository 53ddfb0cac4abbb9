package rollback

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/migrate"
)

func TestShowBothForms(t *testing.T) {
	rep := Report{Steps: []migrate.Step{{Name: "pointer", Status: "done", Detail: "/app/table = single"}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, nil, rep, "dev-a-single", "single") })
	for _, want := range []string{"STEP", "pointer", `Rolled back: the application's pointer says "single" and dev-a-single takes writes again.`} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	steps, _ := doc["steps"].([]any)
	if doc["dry_run"] != false || len(steps) != 1 || steps[0].(map[string]any)["status"] != "done" {
		t.Errorf("JSON view: %v; want dry_run false and the step", doc)
	}
}
