package timeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestTimelineShowsBothForms(t *testing.T) {
	setup := cmdtest.AuditRun(t, filepath.Join(t.TempDir(), "audit.jsonl"), "INC-1", "pitr status")
	human, doc := viewtest.Forms[map[string]any](t, setup, func(f *factory.Factory) error {
		return Run(context.Background(), f, &Options{Incident: "INC-1"})
	})
	if !strings.Contains(human, "| time (UTC) | who |") || !strings.Contains(human, "pitr status") {
		t.Errorf("human view lacks the table header or the run:\n%s", human)
	}
	runs, _ := doc["runs"].([]any)
	if doc["incident"] != "INC-1" || len(runs) != 1 {
		t.Errorf("JSON view: %v; want incident INC-1 and its one run", doc)
	}
	if _, ok := doc["steps"]; !ok {
		t.Errorf("JSON view lacks steps: %v", doc)
	}
}
