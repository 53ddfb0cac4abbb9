package plan

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/migrate"
)

func TestShowBothForms(t *testing.T) {
	res := &migrate.PlanResult{Source: &migrate.SourceInfo{Table: "dev-a-single", Key: "pk"}, Scanned: 4,
		Tables: []migrate.TableCount{{Table: "dev-a-user", Routes: []string{"user"}, Items: 4}}, Ready: true}
	p := planned{res, []Path{{Name: "scan", How: "dynops migrate backfill ...", ReadUnits: 2, WriteUnits: 4}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, p, capacity.BuiltInPrices()) })
	for _, want := range []string{"Source dev-a-single", "DESTINATION", "dev-a-user", "Ready:", "Backfill paths", "scan"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	paths, _ := doc["paths"].([]any)
	tables, _ := doc["tables"].([]any)
	if doc["ready"] != true || doc["scanned"] != 4.0 || len(tables) != 1 || len(paths) != 1 || doc["source"] == nil {
		t.Errorf("JSON view: %v; want the plan's fields and its paths side by side", doc)
	}
}
