package guideline

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReasonSaysWhy(t *testing.T) {
	for reason, want := range map[string]bool{
		"TODO adopt: say why (PITR off; or take the fix: delete these two lines)": false,
		"todo":                              false,
		"FIXME later":                       false,
		"TBD":                               false,
		"tbd: ask the team":                 false,
		"provisioned: TODO adopt: say why":  false, // DDB-CAP-01's tag prefixes the reason
		"legacy keys; TODO adopt: say why":  false, // DDB-NAME-03 joins two reasons
		"XXX":                               false,
		"x":                                 false,
		"x1":                                false,
		"--":                                false,
		"":                                  false,
		"steady":                            true,
		"ARCH-42":                           true,
		"legacy single-table keys, OPS-77":  true,
		"todolist service keeps its PK/SK":  true, // a word that starts with todo is not a placeholder
		"mastodon import table, OPS-12":     true,
		"decommission ticket OPS-123":       true,
		"compliance: user data gone in 7 d": true,
	} {
		assert.Equal(t, want, ReasonSaysWhy(reason), "%q", reason)
	}
}

// TestReasonPatternsInSync: the modules, the Rego policies and dynops check
// use one definition of a placeholder reason; their copies must not drift.
func TestReasonPatternsInSync(t *testing.T) {
	var data struct {
		Guideline struct {
			Placeholder string `json:"reason_placeholder"`
			Substance   string `json:"reason_substance"`
		} `json:"guideline"`
	}
	b, err := os.ReadFile("../../policies/data.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &data))
	assert.Equal(t, ReasonPlaceholderPattern, data.Guideline.Placeholder, "policies/data.json guideline.reason_placeholder")
	assert.Equal(t, ReasonSubstancePattern, data.Guideline.Substance, "policies/data.json guideline.reason_substance")

	for _, path := range []string{"../../modules/dynamodb-table/main.tf", "../../modules/dynamodb-table-replica/main.tf"} {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
		require.False(t, diags.HasErrors(), diags.Error())
		got := map[string]string{}
		for _, blk := range f.Body.(*hclsyntax.Body).Blocks {
			if blk.Type != "locals" {
				continue
			}
			for name, a := range blk.Body.Attributes {
				if name == "reason_placeholder" || name == "reason_substance" {
					v, d := a.Expr.Value(nil)
					require.False(t, d.HasErrors(), d.Error())
					got[name] = v.AsString()
				}
			}
		}
		assert.Equal(t, ReasonPlaceholderPattern, got["reason_placeholder"], "%s local.reason_placeholder", path)
		assert.Equal(t, ReasonSubstancePattern, got["reason_substance"], "%s local.reason_substance", path)
	}
}

// TestPlaceholderExceptionDoesNotCount: dynops check reports a rule whose
// exception tag is a placeholder as failed, naming the tag.
func TestPlaceholderExceptionDoesNotCount(t *testing.T) {
	s := compliant()
	s.Table.DeletionProtectionEnabled = aws.Bool(false)
	s.Tags = map[string]string{ExceptionTagPrefix + Prot01: "TODO adopt: say why (deletion protection off)"}
	var prot *Finding
	for _, f := range Evaluate(s) {
		if f.Rule == Prot01 {
			prot = &f
		}
	}
	require.NotNil(t, prot)
	assert.Equal(t, Fail, prot.Status)
	assert.Contains(t, prot.Message, "is a placeholder")
	assert.Contains(t, prot.Message, "DDB-EXC-01")

	s.Tags[ExceptionTagPrefix+Prot01] = "decommission ticket OPS-123"
	for _, f := range Evaluate(s) {
		if f.Rule == Prot01 {
			assert.Equal(t, Exception, f.Status)
		}
	}
}
