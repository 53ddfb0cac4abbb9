package junit_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/junit"
	"github.com/dynops/dynops/test/helpers/schemas"
)

var at = time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)

// findings: one table with a failing rule over two resources (one passing),
// an exception-only rule, a warning; a second table that passes; a third
// table with no findings at all.
var findings = []guideline.Finding{
	{Table: "prod-a-b", Resource: "prod-a-b", Rule: guideline.Prot01, Severity: guideline.Error, Status: guideline.Pass, Message: "on"},
	{Table: "prod-a-b", Resource: "prod-a-b@eu-west-1", Rule: guideline.Prot01, Severity: guideline.Error, Status: guideline.Fail, Message: "replica off <&> \"quoted\""},
	{Table: "prod-a-b", Resource: "prod-a-b", Rule: guideline.Pitr01, Severity: guideline.Error, Status: guideline.Exception, Message: "off", Reason: "work table"},
	{Table: "prod-a-b", Resource: "prod-a-b", Rule: guideline.Name03, Severity: guideline.Warning, Status: guideline.Fail, Message: "TTL off"},
	{Table: "prod-c-d", Resource: "prod-c-d", Rule: guideline.Prot01, Severity: guideline.Error, Status: guideline.Pass, Message: "on"},
}

func write(t *testing.T, tables []string, fs []guideline.Finding) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, junit.Write(&b, tables, fs, at, "ci-runner"))
	schemas.JUnit(t, b.Bytes())
	return b.Bytes()
}

func TestJUnitOneCasePerTableAndRule(t *testing.T) {
	doc := write(t, []string{"prod-a-b", "prod-c-d", "prod-e-f"}, findings)
	var got junit.TestSuites
	require.NoError(t, xml.Unmarshal(doc, &got))
	require.Len(t, got.Suites, 3, "one suite per table, an empty one included")
	a := got.Suites[0]
	assert.Equal(t, "prod-a-b", a.Name)
	assert.Equal(t, "2026-11-26T22:00:00", a.Timestamp)
	assert.Equal(t, []int{3, 2, 1}, []int{a.Tests, a.Failures, a.Skipped})
	cases := map[string]junit.TestCase{}
	for _, c := range a.Cases {
		cases[strings.Fields(c.Name)[0]] = c
		assert.Equal(t, "prod-a-b", c.ClassName)
	}
	prot := cases[guideline.Prot01]
	require.NotNil(t, prot.Failure, "one failing replica fails the table's case")
	assert.Equal(t, "error", prot.Failure.Type)
	assert.Contains(t, prot.Failure.Text, "prod-a-b@eu-west-1: replica off <&> \"quoted\"")
	assert.Contains(t, prot.Failure.Text, "AWS Security Hub DynamoDB.6", "the failure names the controls it covers")
	pitr := cases[guideline.Pitr01]
	assert.Nil(t, pitr.Failure)
	require.NotNil(t, pitr.Skipped, "an exception is a skip with its reason")
	assert.Contains(t, pitr.Skipped.Text, "exception: work table")
	require.NotNil(t, cases[guideline.Name03].Failure)
	assert.Equal(t, "warning", cases[guideline.Name03].Failure.Type)
	assert.Equal(t, []int{1, 0}, []int{got.Suites[1].Tests, got.Suites[1].Failures})
	assert.Zero(t, got.Suites[2].Tests)
}

func TestJUnitNoTables(t *testing.T) {
	var got junit.TestSuites
	require.NoError(t, xml.Unmarshal(write(t, nil, nil), &got))
	assert.Empty(t, got.Suites)
}

// TestJUnitSchemaRejects: xmllint fails a report that breaks the XSD, so a
// pass above means something.
func TestJUnitSchemaRejects(t *testing.T) {
	doc := string(write(t, []string{"prod-a-b"}, findings))
	for name, bad := range map[string]string{
		"no hostname":     strings.Replace(doc, ` hostname="ci-runner"`, "", 1),
		"zoned timestamp": strings.Replace(doc, `2026-11-26T22:00:00"`, `2026-11-26T22:00:00Z"`, 1),
		"no properties":   strings.Replace(doc, "<properties>", "<props>", 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, doc, bad)
			out, err := schemas.ValidateJUnit([]byte(bad))
			assert.Error(t, err, out)
		})
	}
}
