// Package floors checks the import graph of internal/: the command tree
// (internal/cmd/...) is the top floor, so no package below it imports
// anything of it (capacity's flags used to: internal/cmd/budget registers
// them now).
package floors

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/dynops/dynops/"

// aboveTheTree are the packages under internal/ that stand above the command
// tree, as cmd/dynops does: they take the whole tree as their input.
var aboveTheTree = map[string]string{
	"clidoc": "renders the CLI reference (docs/cli) from root's command tree",
}

// TestNothingBelowTheCommandsImportsThem parses the imports of every Go
// file under internal/ outside internal/cmd and aboveTheTree (its in-package
// tests included; an external _test package, which walks the tree from
// outside, is not part of the package) and fails on one that imports
// internal/cmd or a package under it.
func TestNothingBelowTheCommandsImportsThem(t *testing.T) {
	root := filepath.Join("..", "..", "..", "internal")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == filepath.Join(root, "cmd") || aboveTheTree[d.Name()] != "" && filepath.Dir(path) == root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		if strings.HasSuffix(f.Name.Name, "_test") {
			return nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if upward(p) {
				t.Errorf("%s imports %s: packages under internal/ know nothing of the command line; move what needs it into internal/cmd (as internal/cmd/budget holds capacity's flags)", fset.Position(imp.Pos()), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under internal/: the walk is broken", files)
	}
}

// upward reports whether an import path is the command tree's.
func upward(path string) bool {
	return path == module+"internal/cmd" || strings.HasPrefix(path, module+"internal/cmd/")
}

// TestUpwardMatchesOnlyTheCommandTree: the matcher catches internal/cmd and
// its packages, not packages whose names merely start with "cmd".
func TestUpwardMatchesOnlyTheCommandTree(t *testing.T) {
	for p, want := range map[string]bool{
		module + "internal/cmd/flagcheck": true,
		module + "internal/cmd":           true,
		module + "internal/cmdline":       false,
		module + "internal/capacity":      false,
		module + "cmd/dynops":             false,
	} {
		if upward(p) != want {
			t.Errorf("upward(%s) = %v, want %v", p, !want, want)
		}
	}
}
