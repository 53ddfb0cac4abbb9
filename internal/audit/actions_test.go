package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestActionsAreDocumented: every action constant has a unique name and a
// row in docs/audit.md, the log's public vocabulary.
func TestActionsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), "actions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if other, dup := seen[lit]; dup {
					t.Errorf("%s and %s are both %q", other, name.Name, lit)
				}
				seen[lit] = name.Name
				if !strings.Contains(string(doc), "| `"+lit+"` | `audit."+name.Name+"` |") {
					t.Errorf("docs/audit.md has no row for %s (%q)", name.Name, lit)
				}
			}
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d actions found in actions.go", len(seen))
	}
	if got := DRStepAction("failover", "fence-writes"); got != "dr failover: fence-writes" {
		t.Errorf("DRStepAction = %q", got)
	}
}

// TestActionsAreConstants: no product code names an audit action with a
// string literal: a new action gets a constant in actions.go and a row in
// docs/audit.md (TestActionsAreDocumented), so the log's vocabulary stays one list.
func TestActionsAreConstants(t *testing.T) {
	literal := regexp.MustCompile(`\.Act\("`)
	for _, root := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if literal.MatchString(line) {
					t.Errorf("%s:%d names an audit action with a literal: add a constant to internal/audit/actions.go and a row to docs/audit.md\n\t%s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
