package view

import (
	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"go/ast"
	"strings"
	"testing"
)

// TestOnlyViewsChooseTheOutputForm reads the command sources: a command that
// asks whether --output json was given (f.JSON(), factory.OutputJSON,
// Flags.Output) chooses its output form by hand instead of through a view
// (view.Pick, view.Results). The factory (which defines the flag), root
// (which sets the streams up for JSON) and this package are where the form
// is known.
func TestOnlyViewsChooseTheOutputForm(t *testing.T) {
	fset, files := cmdtest.Sources(t, "..")
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
	fset, files := cmdtest.Sources(t, "..")
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
