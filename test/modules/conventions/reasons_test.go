// Package conventions checks rules every module follows, from the modules'
// source (no terraform run).
package conventions

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// reasonAttr finds a reason inside an object type: `reason = optional(...)`
// or `x_reason = ...`.
var reasonAttr = regexp.MustCompile(`(?m)^\s*([a-z0-9_]*reason)\s*=`)

// TestExceptionReasonsAreFlatInputs_DDB_EXC_01: every exception reason of
// every module has one shape (decided for v2.0.0): a flat string input named
// `<input>_reason` beside the input it explains, never an attribute inside
// an object input, and never named otherwise.
func TestExceptionReasonsAreFlatInputs_DDB_EXC_01(t *testing.T) {
	files, err := filepath.Glob("../../../modules/*/variables.tf")
	if err != nil || len(files) < 8 {
		t.Fatalf("modules/*/variables.tf: %d files, %v", len(files), err)
	}
	reasons := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variables(t, path, src) {
			typ := v.typ
			if strings.Contains(v.name, "reason") {
				reasons++
				if !strings.HasSuffix(v.name, "_reason") {
					t.Errorf("%s: variable %q is a reason not named <input>_reason", path, v.name)
				}
				if typ != "string" {
					t.Errorf("%s: variable %q is of type %s: a reason is a string", path, v.name, typ)
				}
				continue
			}
			if strings.Contains(typ, "object(") {
				for _, m := range reasonAttr.FindAllStringSubmatch(typ, -1) {
					t.Errorf("%s: variable %q has %q inside its object type: a reason is a flat input %s_%s beside it", path, v.name, m[1], v.name, m[1])
				}
			}
		}
	}
	// The table module alone has ten; a parse that finds none checks nothing.
	if reasons < 15 {
		t.Errorf("found %d reason inputs in %d modules: the parse missed them", reasons, len(files))
	}
}

type variable struct{ name, typ string }

// variables returns the variables of a file with the source text of their type.
func variables(t *testing.T, path string, src []byte) []variable {
	t.Helper()
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	var out []variable
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "variable" || len(b.Labels) != 1 {
			continue
		}
		v := variable{name: b.Labels[0]}
		if a, ok := b.Body.Attributes["type"]; ok {
			r := a.Expr.Range()
			v.typ = string(src[r.Start.Byte:r.End.Byte])
		}
		out = append(out, v)
	}
	return out
}
