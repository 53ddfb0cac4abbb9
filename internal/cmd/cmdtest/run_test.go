package cmdtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
)

// TestRunMapsExitCodesAsTheBinary: Run goes through root, so a refusal is
// exit 2 with root's wording, help is exit 0, and the flags of Env are the
// global ones (an unknown --region would be refused before the command).
func TestRunMapsExitCodesAsTheBinary(t *testing.T) {
	r := cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "test") {
		t.Errorf("version: exit %d, stdout %q; want 0 and the version given to root", r.Code, r.Stdout)
	}
	r = cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "pitr", "restroe")
	if r.Code != 2 || !strings.Contains(r.Stderr, "Did you mean this?") || r.Stdout != "" {
		t.Errorf("a mistyped subcommand: exit %d, stdout %q, stderr %q; want 2 with root's suggestion on stderr", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1"}, "item", "get", "--table", "dev-a-b", "--key", `{"id": "u1"}`, "--jq", ".")
	if r.Code != 2 || !strings.Contains(r.Stderr, "add -o json") || r.Stdout != "" {
		t.Errorf("--jq without -o json: exit %d, stdout %q, stderr %q; want 2 saying to add -o json", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRunSetsVarsForTheRunOnly: Env.Vars are the run's environment (as the
// binary's would be) and are restored when the test ends.
func TestRunSetsVarsForTheRunOnly(t *testing.T) {
	const bad = "http://example.com:5000"
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Run("set", func(t *testing.T) {
		r := cmdtest.Run(t, root.Execute, cmdtest.Env{Region: "eu-west-1", Vars: map[string]string{"AWS_ENDPOINT_URL": bad}}, "item", "get", "--table", "dev-a-b", "--key", `{"id": "u1"}`)
		if r.Code == 0 || !strings.Contains(r.Stderr, "AWS_ENDPOINT_URL "+bad+" is plain http") {
			t.Errorf("AWS_ENDPOINT_URL=%s: exit %d, stderr %q; want a refusal naming the variable", bad, r.Code, r.Stderr)
		}
	})
	if got := os.Getenv("AWS_ENDPOINT_URL"); got != "" {
		t.Errorf("AWS_ENDPOINT_URL is %q after the run's test; want it restored", got)
	}
}

// rootPath is the import path of the root command.
const rootPath = "github.com/dynops/dynops/internal/cmd/root"

// executeCalls returns where f calls root.Execute itself (rather than
// handing it to Run).
func executeCalls(f *ast.File) []token.Pos {
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == rootPath {
			name = "root"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var found []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Execute" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
					found = append(found, call.Pos())
				}
			}
		}
		return true
	})
	return found
}

// TestInProcessRunsOnlyThroughRun: outside the binary's main, dynops runs
// in-process only through Run (its flags, streams, audit log and logging in
// one place): a test that calls root.Execute itself fails here.
func TestInProcessRunsOnlyThroughRun(t *testing.T) {
	repo := filepath.Join("..", "..", "..")
	allowed := map[string]bool{"cmd/dynops/main.go": true}
	files := 0
	for _, top := range []string{"cmd", "internal", "test"} {
		err := filepath.WalkDir(filepath.Join(repo, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			rel, _ := filepath.Rel(repo, path)
			files++
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if allowed[filepath.ToSlash(rel)] {
				return nil
			}
			for _, pos := range executeCalls(f) {
				t.Errorf("%s:%d calls root.Execute: run dynops in-process with cmdtest.Run(t, root.Execute, cmdtest.Env{...}, args...) (or harness's target.Dynops)", rel, fset.Position(pos).Line)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 300 {
		t.Fatalf("read only %d Go files: the walk is broken", files)
	}
}

// TestExecuteCallsFindsACallNotAValue: a call of root.Execute (under any
// import name) is found; root.Execute handed to Run is not.
func TestExecuteCallsFindsACallNotAValue(t *testing.T) {
	for src, want := range map[string]int{
		`import "` + rootPath + `"; func f() { root.Execute(ctx, f, "test", args) }`:                     1,
		`import r "` + rootPath + `"; func f() { _ = r.Execute(ctx, f, "test", args) }`:                  1,
		`import "` + rootPath + `"; func f() { cmdtest.Run(t, root.Execute, cmdtest.Env{}, "version") }`: 0,
		`import "other/root"; func f() { root.Execute(ctx, f, "test", args) }`:                           0,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+strings.ReplaceAll(src, "; ", "\n"), 0)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := len(executeCalls(f)); got != want {
			t.Errorf("%s: %d calls found, want %d", src, got, want)
		}
	}
}
