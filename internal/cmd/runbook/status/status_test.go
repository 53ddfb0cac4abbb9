package status

import (
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/runbook"
)

func TestShowBothForms(t *testing.T) {
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	out := Status{Incident: "INC-1", Where: "s3://b/runbooks/INC-1/", Runs: []Run{{Incident: "INC-1", Runbook: "pitr-restore", Started: "2026-11-29T02:00:00Z",
		Done: []string{"status"}, Current: "restore", Approvals: map[string]*runbook.Approval{"restore": {Step: "restore", PlanSHA256: "3b1f", Needed: 1, Expires: now.Add(time.Hour), Plan: "dynops pitr restore"}}}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, out, now) })
	for _, want := range []string{"Incident INC-1 (s3://b/runbooks/INC-1/)", "pitr-restore (started 2026-11-29T02:00:00Z)", "done:    status", "current: restore",
		"holder:  none", "approval of step restore: waiting for 1 approval(s)", "plan sha256 3b1f:\n    dynops pitr restore"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	runs, _ := doc["runs"].([]any)
	if doc["incident"] != "INC-1" || doc["where"] == "" || len(runs) != 1 {
		t.Fatalf("JSON view: %v; want the incident, where and its run", doc)
	}
	run := runs[0].(map[string]any)
	if run["runbook"] != "pitr-restore" || run["current"] != "restore" || run["held"] != false || run["approvals"] == nil {
		t.Errorf("JSON view's run: %v; want its runbook, current step, lease and approvals", run)
	}
}
