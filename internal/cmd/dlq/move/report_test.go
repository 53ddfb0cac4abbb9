package move

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/redrive"
)

// TestPrintReport: the table output names the destination (each message's
// source queue when --to-queue is not given), the method, the task and the
// counts, and a run with errors exits 1 after listing them (issue 18: a
// survivor of the command sample flipped the no-destination branch).
func TestPrintReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rep      redrive.MoveReport
		want     string
		wantCode int
	}{
		{"dry run, back to the sources", redrive.MoveReport{Source: "DLQ", DryRun: true, Visible: 4, Method: "StartMessageMoveTask"},
			"DRY RUN: with --yes dynops would move the 4 visible message(s) of DLQ to each message's source queue by StartMessageMoveTask\n", 0},
		{"dry run, to a queue", redrive.MoveReport{Source: "DLQ", Dest: "Q2", DryRun: true, Visible: 1, Method: "receive/send/delete"},
			"DRY RUN: with --yes dynops would move the 1 visible message(s) of DLQ to Q2 by receive/send/delete\n", 0},
		{"moved by a task", redrive.MoveReport{Source: "DLQ", Moved: 3, Method: "StartMessageMoveTask", TaskHandle: "h1", TaskStatus: "COMPLETED"},
			"moved 3 message(s) from DLQ to each message's source queue by StartMessageMoveTask (task h1: COMPLETED); 0 kept\n", 0},
		{"moved by hand, with errors", redrive.MoveReport{Source: "DLQ", Dest: "Q2", Moved: 2, Kept: 1, Method: "receive/send/delete", Errors: []string{"m3: send failed"}},
			"moved 2 message(s) from DLQ to Q2 by receive/send/delete; 1 kept\n  m3: send failed\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			err := printReport(factory.New(ios), tc.rep)
			assert.Equal(t, tc.want, out.String())
			var exit factory.ExitError
			if tc.wantCode == 0 {
				assert.NoError(t, err)
			} else if assert.True(t, errors.As(err, &exit), "want exit %d, got %v", tc.wantCode, err) {
				assert.Equal(t, tc.wantCode, exit.Code)
			}
		})
	}
}

// TestPrintReportBothForms: one report in both forms, the line and the JSON
// document with the counts and the method.
func TestPrintReportBothForms(t *testing.T) {
	rep := redrive.MoveReport{Source: "DLQ", Dest: "Q2", Moved: 2, Kept: 1, Method: "receive/send/delete"}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return printReport(f, rep) })
	assert.Equal(t, "moved 2 message(s) from DLQ to Q2 by receive/send/delete; 1 kept\n", human)
	assert.Equal(t, 2.0, doc["moved"], "JSON: %v", doc)
	assert.Equal(t, 1.0, doc["kept"], "JSON: %v", doc)
	assert.Equal(t, "receive/send/delete", doc["method"], "JSON: %v", doc)
}
