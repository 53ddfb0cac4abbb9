// Package repodocs checks the repository's documentation against what it
// documents: the generated CLI reference is current, and nothing points at
// files users do not have.
package repodocs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/clidoc"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestCLIReferenceCurrent: docs/cli is what the command tree renders now.
func TestCLIReferenceCurrent(t *testing.T) {
	dir := filepath.Join(repoRoot(t), clidoc.Dir)
	diff, err := clidoc.Diff(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Errorf("%s is not current (%d page(s)): %s\nfix: run `make docs` and commit %s", clidoc.Dir, len(diff), strings.Join(diff, ", "), clidoc.Dir)
	}
}

// TestCLIReferenceDiffFails: the check above can fail (a stale, a missing
// and an extra page are each reported).
func TestCLIReferenceDiffFails(t *testing.T) {
	dir := t.TempDir()
	if err := clidoc.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dynops_pitr_status.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "dynops.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dynops_gone.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff, err := clidoc.Diff(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(diff, "\n")
	for _, want := range []string{"dynops_pitr_status.md (stale)", "dynops.md (missing)", "dynops_gone.md (no such command)"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff %q lacks %q", got, want)
		}
	}
}

// outside matches references to files outside the repository: the
// development machine's shared notes, in any spelling.
var outside = regexp.MustCompile(`(\.\./shared\b|/work/shared|\bGUIDELINE\.md)`)

// TestNoPointersOutsideRepo: no tracked file points readers at notes users
// do not have (the guideline users have is docs/guideline.md).
func TestNoPointersOutsideRepo(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to list", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: expected the whole repository", len(files))
	}
	for _, f := range files {
		if f == "CHANGELOG.md" || strings.HasPrefix(f, "test/project/repodocs/") {
			continue // history may name what was there; this test names the pattern
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d points outside the repository (%q): cite docs/guideline.md or a file in the repo", f, i+1, strings.TrimSpace(m))
			}
		}
	}
}

// TestOutsidePatternMatches: the pattern finds each spelling and not the
// repository's own guideline.
func TestOutsidePatternMatches(t *testing.T) {
	for _, s := range []string{"see ../shared/EMULATOR.md", "/work/shared/TOOLCHAIN.md", "# rules of shared/GUIDELINE.md", "GUIDELINE.md DDB-SEC-02"} {
		if !outside.MatchString(s) {
			t.Errorf("%q not matched", s)
		}
	}
	for _, s := range []string{"docs/guideline.md#ddb-exp-02", "a shared table"} {
		if outside.MatchString(s) {
			t.Errorf("%q matched", s)
		}
	}
}
