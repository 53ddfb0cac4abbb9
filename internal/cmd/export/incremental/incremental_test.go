package incremental

import (
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportwindow"
)

func TestPrintStepsBothForms(t *testing.T) {
	cp := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	steps := []export.Outcome{{Table: "dev-hoge-user", Decisions: []exportwindow.Decision{{Action: exportwindow.Advance, Reason: "COMPLETED"}},
		State: exportwindow.State{Checkpoint: cp}, Lag: 90 * time.Second}}
	human, doc := viewtest.Forms[[]map[string]any](t, nil, func(f *factory.Factory) error { return printSteps(f, steps) })
	for _, want := range []string{"TABLE", "dev-hoge-user", "advance", "checkpoint 2026-11-22T09:00:00Z; lag 1m30s"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	if len(doc) != 1 || doc[0]["table"] != "dev-hoge-user" || doc[0]["state"] == nil || doc[0]["lag_ns"] != 9e10 {
		t.Errorf("JSON view: %v; want the step with its table, state and lag", doc)
	}
	decisions, _ := doc[0]["decisions"].([]any)
	if len(decisions) != 1 {
		t.Errorf("JSON view: decisions %v; want the one", doc[0]["decisions"])
	}
}
