package show

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestShowShowsBothForms(t *testing.T) {
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return Run(f, "pitr-restore") })
	if !strings.HasPrefix(human, "# ") || !strings.Contains(human, "```dynops") {
		t.Errorf("human view: want the runbook's Markdown, got:\n%.300s", human)
	}
	steps, _ := doc["steps"].([]any)
	if doc["name"] != "pitr-restore" || len(steps) == 0 {
		t.Errorf("JSON view: %v; want the runbook's name and steps", doc)
	}
	if _, ok := doc["Markdown"]; ok {
		t.Errorf("JSON view carries the Markdown: %v", doc)
	}
}
