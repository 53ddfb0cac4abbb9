package reject

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/runbook"
)

// TestShowBothForms: the rejection as a line on stderr for a person, and as
// the JSON document on stdout.
func TestShowBothForms(t *testing.T) {
	st := &runbook.State{Runbook: "pitr-restore", Incident: "INC-1"}
	a := &runbook.Approval{Step: "restore", PlanSHA256: "3b1f", Needed: 1, Rejected: &runbook.Decision{Caller: "arn:aws:iam::123456789012:user/b"}}
	var stderr []string
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		err := show(f, st, "restore", a)
		stderr = append(stderr, f.IOStreams.ErrOut.(*bytes.Buffer).String())
		return err
	})
	if human != "" || len(stderr) != 2 || !strings.Contains(stderr[0], "Rejected step restore of pitr-restore (incident INC-1): the run stops at it.") || stderr[1] != "" {
		t.Errorf("stdout %q, stderr per form %q; want the line on stderr for a person only", human, stderr)
	}
	if doc["step"] != "restore" || doc["plan_sha256"] != "3b1f" || doc["needed"] != 1.0 || doc["rejected"] == nil {
		t.Errorf("JSON view: %v; want the rejection", doc)
	}
}
