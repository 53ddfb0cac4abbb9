package view

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// commandSources parses every non-test Go file under internal/cmd, and fails
// when the walk finds too few to be the tree.
func commandSources(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
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
		files[filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d command sources under internal/cmd: the walk is broken", len(files))
	}
	return fset, files
}

// TestOnlyViewsChooseTheOutputForm reads the command sources: a command that
// asks whether --output json was given (f.JSON(), factory.OutputJSON,
// Flags.Output) chooses its output form by hand instead of through a view
// (view.Pick, view.Results). The factory (which defines the flag), root
// (which sets the streams up for JSON) and this package are where the form
// is known.
func TestOnlyViewsChooseTheOutputForm(t *testing.T) {
	fset, files := commandSources(t)
	for path, f := range files {
		if strings.HasPrefix(path, "view/") || strings.HasPrefix(path, "factory/") || strings.HasPrefix(path, "root/") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			bad := ""
			switch sel.Sel.Name {
			case "JSON":
				if _, isPkg := sel.X.(*ast.Ident); !isPkg || sel.X.(*ast.Ident).Name != "view" {
					bad = "asks f.JSON()"
				}
			case "OutputJSON":
				bad = "compares with factory.OutputJSON"
			case "Output":
				if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Flags" {
					bad = "reads Flags.Output"
				}
			}
			if bad == "" {
				return true
			}
			t.Errorf("%s: %s: choose the output form once, through a view (view.Results for one result, view.Pick for a view interface)", fset.Position(sel.Pos()), bad)
			return true
		})
	}
}

// maxRunLines is how long a command's Run function may be: options in, the
// domain package's work, a view out.
const maxRunLines = 60

// TestRunFunctionsAreThin reads the command sources: a function named Run or
// run* in a command package longer than maxRunLines does the domain's work
// in the command; move it into the internal/<domain> package and keep the
// command to options, the guard, the call and the view.
func TestRunFunctionsAreThin(t *testing.T) {
	fset, files := commandSources(t)
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !strings.HasPrefix(strings.ToLower(fd.Name.Name), "run") {
				continue
			}
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line
			if lines <= maxRunLines {
				continue
			}
			t.Errorf("%s: %s is %d lines (at most %d): keep the command to options, guard, the domain call and its view", fset.Position(fd.Pos()), fd.Name.Name, lines, maxRunLines)
		}
	}
}
