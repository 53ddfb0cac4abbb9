package verify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestVerifyShowsBothForms(t *testing.T) {
	setup := cmdtest.AuditRun(t, filepath.Join(t.TempDir(), "audit.jsonl"), "INC-1", "pitr status")
	human, doc := viewtest.Forms[map[string]any](t, setup, func(f *factory.Factory) error {
		return Run(context.Background(), f, &Options{})
	})
	if !strings.Contains(human, "the chain holds (2 records chained") {
		t.Errorf("human view: %q; want the chain holds with its count", human)
	}
	if doc["chained"] != 2.0 || doc["path"] == "" {
		t.Errorf("JSON view: %v; want chained 2 and the path", doc)
	}
}
