package shared

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// What reads an export's data (or hands it to ImportTable), by package, and
// what vouches for the exports read (exportverify.Vouch, directly or through
// the helpers of this package and internal/export).
var (
	exportReaders = map[string][]string{
		"/internal/exportverify": {"OpenExport", "Verify"},
		"/internal/export":       {"FindSource", "FindIncrements", "VerifySource", "ApplyIncrements", "WindowChanges"},
	}
	exportVouchers = map[string][]string{
		"/internal/exportverify": {"Vouch", "VouchUnnamed"},
		// PrepareRevert vouches; export.Revert takes only the RevertSource
		// it makes (its exports are unexported), so the type holds the rule.
		// PlanApply vouches for every export of the chain.
		"/internal/export":            {"Vouch", "PrepareRevert", "PlanApply"},
		"/internal/cmd/export/shared": {"VouchExports", "VouchExport", "VouchUnnamed"},
	}
)

// TestEveryExportReadIsVouched (issue 44) reads every command source under
// internal/cmd: a function that reads an export's data (opens an export,
// verifies one, finds one to import, reverts or applies from one) must also
// vouch for it in the same function (shared.VouchExports, VouchExport,
// VouchUnnamed, export.Vouch or exportverify.Vouch): whoever can write under
// an export prefix must not decide what dynops reads.
func TestEveryExportReadIsVouched(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	var bad []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		n++
		imports := importNames(f)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var reads []string
			vouches := false
			ast.Inspect(fn.Body, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok {
					return true
				}
				pkg, name := callee(call, imports)
				if pkg == "" && filepath.Dir(path) == filepath.Clean("../../export/shared") {
					pkg = "/internal/cmd/export/shared" // this package's own helpers
				}
				if in(exportReaders, pkg, name) {
					reads = append(reads, name)
				}
				vouches = vouches || in(exportVouchers, pkg, name)
				return true
			})
			if len(reads) > 0 && !vouches {
				rel, _ := filepath.Rel("../..", path)
				bad = append(bad, rel+": "+fn.Name.Name+" calls "+strings.Join(reads, ", ")+" without vouching for the export (shared.VouchExports / VouchExport / VouchUnnamed)")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("found only %d command sources under internal/cmd: the walk is broken", n)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// importNames maps each import's local name to its path's suffix after the
// module ("/internal/export").
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		suffix := strings.TrimPrefix(p, "github.com/dynops/dynops")
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = suffix
	}
	return out
}

// callee names the package (by import suffix) and function a call calls:
// pkg.Fn(...) or, for an unqualified call, ("", Fn).
func callee(call *ast.CallExpr, imports map[string]string) (string, string) {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok {
			return imports[id.Name], fn.Sel.Name
		}
	case *ast.Ident:
		return "", fn.Name
	}
	return "", ""
}

func in(set map[string][]string, pkg, name string) bool {
	for _, n := range set[pkg] {
		if n == name {
			return true
		}
	}
	return false
}
