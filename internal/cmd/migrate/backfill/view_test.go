package backfill

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/migrate"
)

func TestShowBothForms(t *testing.T) {
	res := &migrate.BackfillResult{Source: "dev-a-single", State: "state.json", Position: &migrate.Position{},
		Read: 3, ReadThisRun: 3, Written: map[string]int64{"dev-a-user": 3}, WrittenTotal: 3}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		return show(f, result{res, nil, []capacity.Use{}})
	})
	for _, want := range []string{"Backfilled dev-a-single: 3 items read", "DESTINATION", "dev-a-user", "3 items read, 3 written."} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	if doc["source"] != "dev-a-single" || doc["items_read"] != 3.0 || doc["written_total"] != 3.0 || doc["capacity"] == nil {
		t.Errorf("JSON view: %v; want the backfill's counts and the capacity", doc)
	}
	if _, ok := doc["adopt"]; ok {
		t.Errorf("JSON view: %v; no adopt without tables created by import", doc)
	}
}
