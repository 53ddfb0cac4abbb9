package harness

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// byHandAllowed are the folders under test/ that may start dynops
// themselves, and why.
var byHandAllowed = map[string]string{
	"test/helpers/harness": "the runner itself (Target.Command) and the build of the binary",
	"test/tools":           "programs, not suites: bench runs the binary its -dynops flag names, as a user would",
}

// TestNoDynopsProcessByHand: a suite under test/ starts the dynops binary
// only through Target.Command (its flags, environment, temp dir, audit log
// and clean-up in one place), never with exec.Command of its own.
func TestNoDynopsProcessByHand(t *testing.T) {
	root := RepoRoot()
	files := 0
	err := filepath.WalkDir(filepath.Join(root, "test"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if byHandAllowed[filepath.ToSlash(rel)] != "" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, pos := range dynopsByHand(f) {
			p := fset.Position(pos)
			t.Errorf("%s:%d starts the dynops binary with exec.Command: use target.Command(t, args, opts...) (test/helpers/harness), which adds --region, --audit-log, the endpoint, the test's TMPDIR and credentials, and Run/Start/Signal/Wait", rel, p.Line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under test/: the walk is broken", files)
	}
}

// TestDynopsByHandFindsEveryShape: the walk's matcher catches each way a
// suite could start the binary by hand and leaves other programs alone.
func TestDynopsByHandFindsEveryShape(t *testing.T) {
	cases := map[string]bool{
		`exec.Command(harness.DynopsBinary(t), "pitr", "status")`:                                   true,
		`bin := harness.DynopsBinary(t); exec.Command(bin, args...)`:                                true,
		`var bin string; bin, err = harness.BuildDynops(); _ = exec.Command(bin)`:                   true,
		`exec.CommandContext(ctx, os.Getenv("DYNOPS_TEST_BIN"), "item", "get")`:                     true,
		`exec.Command(os.Getenv(harness.BinaryEnv))`:                                                true,
		`exec.Command("bin/dynops", "version")`:                                                     true,
		`exec.Command(filepath.Join(root, "bin", "dynops"))`:                                        true,
		`exec.Command("go", "run", "./cmd/dynops", "table", "diff")`:                                true,
		`x.Command(e.dynops, args...)`:                                                              true,
		`dynopsPath := find(); cmd := exec.Command(dynopsPath)`:                                     true,
		`exec.Command("xmllint", "--noout", "-")`:                                                   false,
		`bin, _ := exec.LookPath("aws"); exec.Command(bin, "dynamodb", "scan")`:                     false,
		`exec.Command(os.Args[0], "-test.run", "^TestHelper$")`:                                     false,
		`exec.Command("terraform", "fmt", dir)`:                                                     false,
		`exec.Command("git", "-C", root, "ls-files")`:                                               false,
		`target.Command(t, []string{"dlq", "redrive"}, harness.Via(proxy)).Run()`:                   false,
		`exec.Command("go", "build", "-o", out, "./cmd/lambdazip")`:                                 false,
		`p := target.Command(t, args); exec.Command("kill", "-0", strconv.Itoa(p.Cmd.Process.Pid))`: false,
	}
	for src, want := range cases {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\nfunc f() {\n"+strings.ReplaceAll(src, "; ", "\n")+"\n}\n", 0)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		// x.Command counts as exec's only where x is the name os/exec is imported as.
		if got := len(dynopsByHandAs(f, map[string]bool{"exec": true, "x": true})) > 0; got != want {
			t.Errorf("%s: found %v, want %v", src, got, want)
		}
	}
}

// dynopsByHand returns where f calls exec.Command or exec.CommandContext on
// the dynops binary.
func dynopsByHand(f *ast.File) []token.Pos {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "os/exec" {
			name := "exec"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	return dynopsByHandAs(f, names)
}

// dynopsByHandAs is dynopsByHand with os/exec imported under the names in
// execNames. An argument names the binary when it mentions dynops (an
// identifier, a string such as "bin/dynops" or "./cmd/dynops", the harness's
// DynopsBinary, BuildDynops or BinaryEnv, DYNOPS_TEST_BIN), or is a variable
// assigned from such an expression.
func dynopsByHandAs(f *ast.File, execNames map[string]bool) []token.Pos {
	tainted := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, rhs := range as.Rhs {
				if mentionsDynops(rhs, nil) {
					for _, lhs := range as.Lhs {
						if id, ok := lhs.(*ast.Ident); ok && id.Name != "_" && id.Name != "err" {
							tainted[id.Name] = true
						}
					}
				}
			}
		}
		return true
	})
	var found []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext") {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || !execNames[pkg.Name] {
			return true
		}
		args := call.Args
		if sel.Sel.Name == "CommandContext" && len(args) > 0 {
			args = args[1:]
		}
		for _, a := range args {
			if mentionsDynops(a, tainted) {
				found = append(found, call.Pos())
				break
			}
		}
		return true
	})
	return found
}

// mentionsDynops reports whether e names the dynops binary: an identifier
// or string that says dynops, the harness's ways to the binary, or a
// variable in tainted.
func mentionsDynops(e ast.Expr, tainted map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			name := strings.ToLower(n.Name)
			if tainted[n.Name] || strings.Contains(name, "dynops") || n.Name == "BinaryEnv" {
				found = true
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && (strings.Contains(s, "dynops") || strings.Contains(s, "DYNOPS_TEST_BIN")) {
				found = true
			}
		}
		return !found
	})
	return found
}
