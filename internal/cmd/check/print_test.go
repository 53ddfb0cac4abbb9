package check

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/iostreams"
)

// findings has every status and severity once, plus an exception with its reason.
var findings = []guideline.Finding{
	{Resource: "t1", Rule: "DDB-PITR-01", Severity: guideline.Error, Status: guideline.Pass, Message: "pitr on", Guideline: "docs/guideline.md#ddb-pitr-01"},
	{Resource: "t1", Rule: "DDB-TAG-01", Severity: guideline.Error, Status: guideline.Fail, Message: "tags missing", Guideline: "docs/guideline.md#ddb-tag-01"},
	{Resource: "t1", Rule: "DDB-TTL-01", Severity: guideline.Warning, Status: guideline.Fail, Message: "no ttl", Guideline: "docs/guideline.md#ddb-ttl-01"},
	{Resource: "t2", Rule: "DDB-DEL-01", Severity: guideline.Error, Status: guideline.Exception, Message: "deletion protection off", Reason: "scratch table", Guideline: "docs/guideline.md#ddb-del-01"},
	{Resource: "t2", Rule: "DDB-PITR-01", Severity: guideline.Error, Status: guideline.Pass, Message: "pitr on", Guideline: "docs/guideline.md#ddb-pitr-01"},
}

func TestSummarizeCountsEachStatus(t *testing.T) {
	s := summarize(findings)
	assert.Equal(t, Summary{Pass: 2, Fail: 2, Exception: 1, Failing: 1, OK: false}, s)
	assert.Equal(t, Summary{Pass: 1, OK: true}, summarize(findings[:1]))
	assert.Equal(t, Summary{Pass: 1, Fail: 1, OK: true}, summarize([]guideline.Finding{findings[0], findings[2]}), "a failing warning is not failing")
}

func TestPrintTableShowsWhatFailsAndWhy(t *testing.T) {
	for _, showPassing := range []bool{false, true} {
		ios, _, out, _ := iostreams.Test()
		rep := Report{Tables: []string{"t1", "t2"}, Findings: findings, Summary: summarize(findings)}
		assert.NoError(t, printTable(ios, rep, showPassing))
		var rows []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "t1 ") || strings.HasPrefix(l, "t2 ") {
				rows = append(rows, l)
			}
		}
		want := 3
		if showPassing {
			want = 5
		}
		assert.Len(t, rows, want, "passing rows shown only with --show-passing:\n%s", out)
		text := out.String()
		assert.Contains(t, text, "deletion protection off (exception: scratch table) [docs/guideline.md#ddb-del-01]")
		assert.Contains(t, text, "tags missing [docs/guideline.md#ddb-tag-01]")
		assert.NotContains(t, text, "(exception: )", "no empty reason")
		assert.NotContains(t, text, "pitr on [", "no guideline link on a passing row")
		if showPassing {
			assert.Contains(t, text, "pitr on")
		} else {
			assert.NotContains(t, text, "pitr on")
		}
	}
}

// TestShowBothForms: one report as the table (with its header) and as the
// JSON document (tables, each finding, the summary).
func TestShowBothForms(t *testing.T) {
	rep := Report{Tables: []string{"t1", "t2"}, Findings: findings, Summary: summarize(findings)}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, &Options{ShowPassing: true}, rep) })
	assert.Contains(t, human, "RESOURCE")
	assert.Contains(t, human, "2 table(s): 2 pass, 2 fail, 1 exception")
	assert.Equal(t, []any{"t1", "t2"}, doc["tables"])
	assert.Len(t, doc["findings"], len(findings))
	assert.Equal(t, map[string]any{"pass": 2.0, "fail": 2.0, "exception": 1.0, "failing_errors": 1.0, "ok": false}, doc["summary"])
}
