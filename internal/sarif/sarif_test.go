package sarif_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/sarif"
	"github.com/dynops/dynops/test/helpers/schemas"
)

const arn = "arn:aws:dynamodb:us-east-1:123456789012:table/prod-hoge-user"

// findings has every status and severity, an index and a replica, and one
// finding without an ARN (a table whose ARN was not read).
var findings = []guideline.Finding{
	{Table: "prod-hoge-user", Resource: "prod-hoge-user", Rule: guideline.Pitr01, Severity: guideline.Error, Status: guideline.Fail, Message: "point-in-time recovery is off", ARN: arn, Controls: guideline.ControlsOf(guideline.Pitr01)},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user", Rule: guideline.Prot01, Severity: guideline.Error, Status: guideline.Pass, Message: "deletion protection on", ARN: arn},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user/index/email-index", Rule: guideline.Name02, Severity: guideline.Error, Status: guideline.Fail, Message: "not a sequence name", ARN: arn + "/index/email-index"},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user@eu-west-1", Rule: guideline.Prot01, Severity: guideline.Error, Status: guideline.Exception, Message: "replica deletion protection off", Reason: "being removed, CHG-1234", ARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user", Rule: guideline.Name03, Severity: guideline.Warning, Status: guideline.Fail, Message: "TTL is off", ARN: arn},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user/consumer/fn1", Rule: guideline.Stream04, Severity: guideline.Error, Status: guideline.Fail, Message: "no DLQ", ARN: arn},
	{Table: "prod-hoge-user", Resource: "prod-hoge-user/consumer/fn2", Rule: guideline.Stream04, Severity: guideline.Error, Status: guideline.Fail, Message: "no DLQ", ARN: arn},
	{Table: "dev-x-y", Resource: "dev-x-y", Rule: guideline.Sec04, Severity: guideline.Info, Status: guideline.Fail, Message: "odd key"},
}

func build(t *testing.T, fs []guideline.Finding) (sarif.Log, []byte) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, sarif.Write(&b, "v2.0.0-test", fs))
	schemas.SARIF(t, b.Bytes())
	var log sarif.Log
	require.NoError(t, json.Unmarshal(b.Bytes(), &log))
	return log, b.Bytes()
}

func TestSARIFValidatesAndCarriesEveryRule(t *testing.T) {
	for name, fs := range map[string][]guideline.Finding{"findings": findings, "none": nil} {
		t.Run(name, func(t *testing.T) {
			log, _ := build(t, fs)
			require.Len(t, log.Runs, 1)
			rules := log.Runs[0].Tool.Driver.Rules
			require.Len(t, rules, len(guideline.Rules()), "one rule per rule ID, whether or not it fired")
			for i, r := range guideline.Rules() {
				assert.Equal(t, r.ID, rules[i].ID)
				assert.Equal(t, guideline.RuleHelp(r.ID)+" ("+guideline.DocLink(r.ID)+")", rules[i].Help.Text, "help is the guideline's section")
				for _, c := range guideline.ControlIDs(r.ID) {
					assert.Contains(t, rules[i].Properties.Tags, c)
				}
			}
		})
	}
}

func TestSARIFResults(t *testing.T) {
	log, _ := build(t, findings)
	res := log.Runs[0].Results
	require.Len(t, res, 7, "passing findings are left out; fails and exceptions are in")
	rules := log.Runs[0].Tool.Driver.Rules
	seen := map[string]bool{}
	for _, r := range res {
		assert.Equal(t, r.RuleID, rules[r.RuleIndex].ID, "ruleIndex points at its rule")
		uri := r.Locations[0].PhysicalLocation.ArtifactLocation.URI
		assert.NotEmpty(t, uri, "GitHub code scanning needs a non-empty artifactLocation uri")
		fp := r.PartialFingerprints[sarif.FingerprintKey]
		assert.Len(t, fp, 64)
		assert.False(t, seen[fp], "one fingerprint per rule and resource (two consumers of one table included)")
		seen[fp] = true
		switch r.Properties.Resource {
		case "prod-hoge-user@eu-west-1":
			assert.Equal(t, "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user", uri)
			require.Len(t, r.Suppressions, 1, "an exception is a suppressed result")
			assert.Equal(t, "being removed, CHG-1234", r.Suppressions[0].Justification)
		case "prod-hoge-user/index/email-index":
			assert.Equal(t, arn+"/index/email-index", uri)
			assert.Equal(t, "error", r.Level)
		case "dev-x-y":
			assert.Equal(t, "dev-x-y", uri, "no ARN read: the resource name, never an invented ARN")
			assert.Equal(t, "note", r.Level)
		}
		if r.RuleID == guideline.Name03 {
			assert.Equal(t, "warning", r.Level)
		}
		if r.RuleID == guideline.Pitr01 {
			assert.NotEmpty(t, r.Properties.Controls)
			assert.True(t, strings.HasPrefix(r.Message.Text, "prod-hoge-user: "))
		}
	}
	// The same finding in another run has the same fingerprint.
	again, _ := build(t, findings[:1])
	assert.Equal(t, res[0].PartialFingerprints, again.Runs[0].Results[0].PartialFingerprints)
}

// TestSARIFSchemaRejects: the validator fails documents that break the
// schema, so a pass above means something.
func TestSARIFSchemaRejects(t *testing.T) {
	_, doc := build(t, findings)
	for name, edit := range map[string]func(map[string]any){
		"no version":     func(m map[string]any) { delete(m, "version") },
		"version 2.0":    func(m map[string]any) { m["version"] = "2.0.0" },
		"bad level":      func(m map[string]any) { result(m)["level"] = "critical" },
		"no message":     func(m map[string]any) { delete(result(m), "message") },
		"ruleIndex < -1": func(m map[string]any) { result(m)["ruleIndex"] = -2 },
	} {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(doc, &m))
			edit(m)
			bad, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Error(t, schemas.ValidateSARIF(bad))
		})
	}
}

func result(m map[string]any) map[string]any {
	return m["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
}
