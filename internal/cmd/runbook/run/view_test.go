package run

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/runbook"
)

// TestViewBothForms: for a person, the steps' own output on stdout and the
// completion on stderr, a short line per step; under JSON, stdout holds the
// summary document only (the steps' output goes to stderr).
func TestViewBothForms(t *testing.T) {
	sum := &runbook.Summary{Incident: "INC-1", Runbook: "pitr-restore", Ran: []string{"status", "restore"}, Complete: true}
	var stderr []string
	var summarize []bool
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		v := newView(f)
		fmt.Fprintln(v.StepOut(), "a step's output")
		summarize = append(summarize, v.Summarize())
		if err := v.Summary(sum); err != nil {
			return err
		}
		v.Complete("pitr-restore", "INC-1", sum)
		stderr = append(stderr, f.IOStreams.ErrOut.(*bytes.Buffer).String())
		return nil
	})
	if human != "a step's output\n" || !strings.Contains(stderr[0], "Runbook pitr-restore complete for incident INC-1: 2 step(s) run, 0 done earlier.") || !summarize[0] {
		t.Errorf("human: stdout %q, stderr %q, summarize %v; want the step's output, the completion and a line per step", human, stderr[0], summarize[0])
	}
	ran, _ := doc["ran"].([]any)
	if doc["incident"] != "INC-1" || doc["complete"] != true || len(ran) != 2 {
		t.Errorf("JSON view: %v; want the summary", doc)
	}
	if stderr[1] != "a step's output\n" || summarize[1] {
		t.Errorf("JSON: stderr %q, summarize %v; want the step's output on stderr and no step lines", stderr[1], summarize[1])
	}
}
