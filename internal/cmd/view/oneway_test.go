package view

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
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

// notYetViews are the command sources that still choose their output form
// by hand (wave 4). The list only shrinks: a file on it that no longer
// forks fails the test too, so the list cannot go stale.
var notYetViews = map[string]bool{
	"audit/log/log.go":                  true,
	"audit/timeline/timeline.go":        true,
	"audit/verify/verify.go":            true,
	"budget/budgets.go":                 true,
	"check/check.go":                    true,
	"dlq/inspect/inspect.go":            true,
	"dlq/move/move.go":                  true,
	"dlq/redrive/redrive.go":            true,
	"dr/drill/drill.go":                 true,
	"dr/shared/shared.go":               true,
	"dr/status/status.go":               true,
	"export/import/import.go":           true,
	"export/incremental/incremental.go": true,
	"export/revert/revert.go":           true,
	"export/shared/shared.go":           true,
	"export/verify/verify.go":           true,
	"guard/guard.go":                    true,
	"item/read.go":                      true,
	"item/write.go":                     true,
	"migrate/backfill/backfill.go":      true,
	"migrate/catchup/catchup.go":        true,
	"migrate/cutover/cutover.go":        true,
	"migrate/plan/plan.go":              true,
	"migrate/rollback/rollback.go":      true,
	"pitr/repair/repair.go":             true,
	"pitr/restore/restore.go":           true,
	"pitr/verify/verify.go":             true,
	"runbook/approve/approve.go":        true,
	"runbook/list/list.go":              true,
	"runbook/reject/reject.go":          true,
	"runbook/run/run.go":                true,
	"runbook/show/show.go":              true,
	"runbook/status/status.go":          true,
	"table/adopt/adopt.go":              true,
	"table/diff/diff.go":                true,
	"table/diff/sharded.go":             true,
	"version/version.go":                true,
}

// TestOnlyViewsChooseTheOutputForm reads the command sources: a command that
// asks whether --output json was given (f.JSON(), factory.OutputJSON,
// Flags.Output) chooses its output form by hand instead of through a view
// (view.Pick, view.Results). The factory (which defines the flag), root
// (which sets the streams up for JSON) and this package are where the form
// is known.
func TestOnlyViewsChooseTheOutputForm(t *testing.T) {
	fset, files := commandSources(t)
	forks := map[string]bool{}
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
			forks[path] = true
			if !notYetViews[path] {
				t.Errorf("%s: %s: choose the output form once, through a view (view.Results for one result, view.Pick for a view interface)", fset.Position(sel.Pos()), bad)
			}
			return true
		})
	}
	for path := range notYetViews {
		if !forks[path] {
			t.Errorf("%s is on notYetViews but no longer forks on the output form: take it off the list", path)
		}
	}
}

// maxRunLines is how long a command's Run function may be: options in, the
// domain package's work, a view out.
const maxRunLines = 60

// notYetThin are the Run functions (path:func) still longer than
// maxRunLines (wave 4). The list only shrinks.
var notYetThin = map[string]bool{
	"check/check.go:Run":                 true,
	"dlq/redrive/redrive.go:Run":         true,
	"export/import/import.go:Run":        true,
	"export/revert/revert.go:Run":        true,
	"item/write.go:run":                  true,
	"migrate/backfill/backfill.go:Run":   true,
	"migrate/cutover/cutover.go:Run":     true,
	"pitr/repair/repair.go:Run":          true,
	"pitr/restore/restore.go:Run":        true,
	"runbook/run/inaws.go:runInAWS":      true,
	"runbook/run/run.go:Run":             true,
	"runbook/status/status.go:RunStatus": true,
	"shard/run/run.go:Run":               true,
	"table/diff/sharded.go:runSharded":   true,
}

// TestRunFunctionsAreThin reads the command sources: a function named Run or
// run* in a command package longer than maxRunLines does the domain's work
// in the command; move it into the internal/<domain> package and keep the
// command to options, the guard, the call and the view.
func TestRunFunctionsAreThin(t *testing.T) {
	fset, files := commandSources(t)
	long := map[string]int{}
	for path, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !strings.HasPrefix(strings.ToLower(fd.Name.Name), "run") {
				continue
			}
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line
			if lines <= maxRunLines {
				continue
			}
			key := path + ":" + fd.Name.Name
			long[key] = lines
			if !notYetThin[key] {
				t.Errorf("%s: %s is %d lines (at most %d): keep the command to options, guard, the domain call and its view", fset.Position(fd.Pos()), fd.Name.Name, lines, maxRunLines)
			}
		}
	}
	var stale []string
	for key := range notYetThin {
		if _, ok := long[key]; !ok {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	for _, key := range stale {
		t.Errorf("%s is on notYetThin but is now at most %d lines: take it off the list", key, maxRunLines)
	}
}
