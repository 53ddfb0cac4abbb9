package cmdtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Sources parses every non-test Go file under the command tree for a walk
// test run from a package directly below internal/cmd (root is ".."),
// leaving out the directories named in skip; files are keyed by their path
// below root ("pitr/repair/repair.go"). It fails when the walk finds too few
// files to be the tree.
func Sources(t testing.TB, root string, skip ...string) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			for _, s := range skip {
				if d.Name() == s {
					return filepath.SkipDir
				}
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d command sources under %s: the walk is broken", len(files), root)
	}
	return fset, files
}
