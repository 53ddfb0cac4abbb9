package approve

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/runbook"
)

// TestShowBothForms: the approval as a line on stderr for a person, and as
// the JSON document on stdout.
func TestShowBothForms(t *testing.T) {
	st := &runbook.State{Runbook: "pitr-restore", Incident: "INC-1"}
	a := &runbook.Approval{Step: "restore", PlanSHA256: "3b1f", Needed: 1, Approvers: []runbook.Decision{{Caller: "arn:aws:iam::123456789012:user/b"}}}
	var stderr []string
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		err := show(f, st, "restore", a)
		stderr = append(stderr, f.IOStreams.ErrOut.(*bytes.Buffer).String())
		return err
	})
	if human != "" || len(stderr) != 2 || !strings.Contains(stderr[0], "Approved step restore of pitr-restore (incident INC-1), plan sha256 3b1f: 1 of 1 approval(s)") || stderr[1] != "" {
		t.Errorf("stdout %q, stderr per form %q; want the line on stderr for a person only", human, stderr)
	}
	if doc["step"] != "restore" || doc["plan_sha256"] != "3b1f" || doc["needed"] != 1.0 || doc["approvers"] == nil {
		t.Errorf("JSON view: %v; want the approval", doc)
	}
}
