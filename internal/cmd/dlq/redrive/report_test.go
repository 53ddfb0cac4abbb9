package redrive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/redrive"
)

// TestReportVerdictCountsEachStatus: the table output's last line counts
// what the run did per status, for a dry run and for an applied run (the
// end-to-end tests in test/cli/dlq read -o json, so these counts are checked
// here: two survivors of issue 18's sample of the command's mutants).
func TestReportVerdictCountsEachStatus(t *testing.T) {
	outcomes := func(statuses ...string) []redrive.Outcome {
		var out []redrive.Outcome
		for i, s := range statuses {
			out = append(out, redrive.Outcome{MessageID: "m" + string(rune('0'+i)), Status: s, Reason: "r"})
		}
		return out
	}
	counts := func(outs []redrive.Outcome) map[string]int {
		c := map[string]int{}
		for _, o := range outs {
			c[o.Status]++
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		dryRun bool
		status []string
		want   string
	}{
		{"dry run: some kept", true, []string{redrive.WouldReplay, redrive.Expired, redrive.WouldReplay, redrive.KeptMalformed, redrive.WouldReplay},
			"5 message(s) from Q in 1.5s: DRY RUN: with --yes dynops would replay 3, and keep 2"},
		{"dry run: none replayable", true, []string{redrive.Expired},
			"1 message(s) from Q in 1.5s: DRY RUN: with --yes dynops would replay 0, and keep 1"},
		{"applied", false, []string{redrive.Replayed, redrive.Failed, redrive.Replayed, redrive.Discarded, redrive.NotDeleted, redrive.Replayed},
			"6 message(s) from Q in 1.5s: 3 replayed and deleted, 2 kept in the queue"},
		{"applied: all replayed", false, []string{redrive.Replayed, redrive.Replayed},
			"2 message(s) from Q in 1.5s: 2 replayed and deleted, 0 kept in the queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			f := factory.New(ios)
			outs := outcomes(tc.status...)
			require.NoError(t, printReport(f, redrive.Report{Queue: "Q", DryRun: tc.dryRun, Outcomes: outs, Counts: counts(outs), Seconds: 1.5}))
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, lines, 1+len(tc.status)+2, "a header, a row per message, a blank line and the verdict:\n%s", out.String())
			assert.True(t, strings.HasPrefix(lines[len(lines)-1], tc.want), "verdict\n got: %s\nwant: %s...", lines[len(lines)-1], tc.want)
		})
	}
}

// TestReportRowDetail: a message's row gives the reason it was kept or, for
// one replayed (or that would be), the records of its batch.
func TestReportRowDetail(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	rep := redrive.Report{Queue: "Q", DryRun: true, Counts: map[string]int{redrive.WouldReplay: 1, redrive.Expired: 1}, Outcomes: []redrive.Outcome{
		{MessageID: "m-replay", Status: redrive.WouldReplay, Target: "fn", Records: []redrive.RecordRef{
			{EventName: "INSERT", Keys: `{"pk":"a"}`}, {EventName: "MODIFY", Keys: `{"pk":"b"}`}}},
		{MessageID: "m-kept", Status: redrive.Expired, Reason: "past the stream's 24 h retention"},
	}}
	require.NoError(t, printReport(factory.New(ios), rep))
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	assert.True(t, strings.HasSuffix(rows["m-replay"], ` 2 record(s): INSERT {"pk":"a"}; MODIFY {"pk":"b"}`), rows["m-replay"])
	assert.Contains(t, rows["m-replay"], " would-replay ")
	assert.Contains(t, rows["m-kept"], " expired ")
	assert.True(t, strings.HasSuffix(rows["m-kept"], " past the stream's 24 h retention"), rows["m-kept"])
}

// TestPrintReportBothForms: one report in both forms, the table with its
// header and the JSON document with each outcome and the counts.
func TestPrintReportBothForms(t *testing.T) {
	rep := redrive.Report{Queue: "DLQ", Counts: map[string]int{redrive.Replayed: 1},
		Outcomes: []redrive.Outcome{{MessageID: "m1", Status: redrive.Replayed, Reason: "r"}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return printReport(f, rep) })
	assert.Contains(t, human, "MESSAGE")
	assert.Contains(t, human, "1 message(s) from DLQ")
	outs, _ := doc["outcomes"].([]any)
	require.Len(t, outs, 1, "JSON: %v", doc)
	assert.Equal(t, "m1", outs[0].(map[string]any)["message_id"], "JSON: %v", doc)
	assert.Equal(t, "DLQ", doc["queue"], "JSON: %v", doc)
	assert.NotNil(t, doc["counts"], "JSON: %v", doc)
}
