package log

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestLogShowsBothForms(t *testing.T) {
	setup := cmdtest.AuditRun(t, filepath.Join(t.TempDir(), "audit.jsonl"), "INC-1", "pitr status")
	human, runs := viewtest.Forms[[]map[string]any](t, setup, func(f *factory.Factory) error {
		return Run(context.Background(), f, &Options{Incident: "INC-1"})
	})
	if !strings.Contains(human, "STARTED") || !strings.Contains(human, "pitr status") || !strings.Contains(human, "INC-1") {
		t.Errorf("human view lacks the table header or the run:\n%s", human)
	}
	if len(runs) != 1 || runs[0]["command"] != "pitr status" || runs[0]["incident"] != "INC-1" || runs[0]["run_id"] == "" {
		t.Errorf("JSON view: %v; want the one run with its command, incident and run_id", runs)
	}
}

func TestLogShowsNoMatchInBothForms(t *testing.T) {
	setup := cmdtest.AuditRun(t, filepath.Join(t.TempDir(), "audit.jsonl"), "INC-1", "pitr status")
	human, runs := viewtest.Forms[[]map[string]any](t, setup, func(f *factory.Factory) error {
		return Run(context.Background(), f, &Options{Incident: "INC-none"})
	})
	if !strings.Contains(human, "No runs in") || runs == nil || len(runs) != 0 {
		t.Errorf("no match: human %q, JSON %v; want the notice and []", human, runs)
	}
}
