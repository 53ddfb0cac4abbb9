package guard

import (
	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestProtectionAndConfirmationOnlyThroughTheGuard reads the command sources:
// a command that decides protection itself (a policy's Decide), checks
// --confirm or prompts for a typed name on its own, or a factory that offers
// protection or confirmation again, is a way around the guard's one order
// (decide, confirm, audit start).
func TestProtectionAndConfirmationOnlyThroughTheGuard(t *testing.T) {
	fset, files := cmdtest.Sources(t, "..", "guard")
	// What the factory may not offer: the guard's steps under any name.
	guardNames := regexp.MustCompile(`^(Protection|Protect|Decide|Confirm|ConfirmMatches|Confirmation|ErrNotConfirmed|CheckTyped)$`)
	for path, f := range files {
		if strings.HasPrefix(path, "factory/") {
			for _, decl := range f.Decls {
				for _, name := range declaredNames(decl) {
					if guardNames.MatchString(name.Name) {
						t.Errorf("%s: the factory declares %s: protection and confirmation live in internal/cmd/guard only (guard.Decide, Decided.CheckTyped, Decided.Confirm)", fset.Position(name.Pos()), name.Name)
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				recv, _ := sel.X.(*ast.Ident)
				switch {
				case sel.Sel.Name == "Decide" && (recv == nil || recv.Name != "guard"):
					t.Errorf("%s: decides protection outside the guard: use guard.Decide(f, targets...)", fset.Position(n.Pos()))
				case sel.Sel.Name == "Stdin":
					t.Errorf("%s: reads a typed name outside the guard: Decided.Confirm prompts for it", fset.Position(n.Pos()))
				case recv != nil && recv.Name == "protect" && sel.Sel.Name == "LoadPolicy" && !strings.HasPrefix(path, "factory/"):
					t.Errorf("%s: loads the protection policy by hand: guard.Decide uses the run's (factory.ProtectPolicy)", fset.Position(n.Pos()))
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(n.Value); err == nil && strings.Contains(s, "Type its name") {
					t.Errorf("%s: prompts for a typed name outside the guard: Decided.Confirm does", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// dryRunHeader matches a dry run's own wording: a string that opens with
// "dry run" in any casing, or says DRY RUN / "Dry run:" anywhere. Help text
// ("Without --yes it is a dry run: ...") does neither.
var dryRunHeader = regexp.MustCompile(`(?i:^\W*dry run\b)|DRY RUN|Dry run:`)

// TestDryRunWordingOnlyInTheGuard reads the command sources: a dry run's
// header (guard.DryRunHeader) and closing notice (Confirmed.PrintDryRun)
// come from the guard, in one casing, never from a command's own string.
func TestDryRunWordingOnlyInTheGuard(t *testing.T) {
	fset, files := cmdtest.Sources(t, "..", "guard")
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && dryRunHeader.MatchString(s) {
				t.Errorf("%s: %q is a dry-run header of its own: use guard.DryRunHeader (and end with Confirmed.PrintDryRun)", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}

// TestDryRunWordingMatcher: the walk's matcher catches the three casings
// the commands used to print, and not help text.
func TestDryRunWordingMatcher(t *testing.T) {
	for _, s := range []string{
		"DRY RUN: nothing changed. With --yes dynops would %s in %s, if %s:\n",
		"dry run: would move the %d visible message(s) of %s to %s by %s\n",
		"Dry run: nothing was changed. Add --yes to %s.",
		"DRY RUN (pass --yes to do it)",
	} {
		if !dryRunHeader.MatchString(s) {
			t.Errorf("not caught: %q", s)
		}
	}
	for _, s := range []string{
		"Without --yes it is a dry run: the preflight runs and every step is printed.",
		"do it (default: dry run)",
		"write only if the item's image still has this hash (from item get or the dry run)",
	} {
		if dryRunHeader.MatchString(s) {
			t.Errorf("help text caught: %q", s)
		}
	}
	if !dryRunHeader.MatchString(DryRunHeader("x")) || !strings.HasPrefix(DryRunHeader(""), "DRY RUN: with --yes dynops would:") {
		t.Errorf("DryRunHeader: %q", DryRunHeader("x"))
	}
}

// declaredNames are the names a top-level declaration introduces (funcs,
// methods, types, vars and consts).
func declaredNames(decl ast.Decl) []*ast.Ident {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		return []*ast.Ident{d.Name}
	case *ast.GenDecl:
		var out []*ast.Ident
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name)
			case *ast.ValueSpec:
				out = append(out, s.Names...)
			}
		}
		return out
	}
	return nil
}
