package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCreateRefusesUnsafeShapes: every shape through which a file written
// for the user could land elsewhere, or be read by others, is refused, with
// or without force, and nothing is written through it.
func TestCreateRefusesUnsafeShapes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		force bool
		want  string
	}{
		{"existing file without force", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out")
			must(t, os.WriteFile(p, []byte("keep"), 0o600))
			return p
		}, false, "pass --force"},
		{"symlink at the path", func(t *testing.T, dir string) string {
			must(t, os.WriteFile(filepath.Join(dir, "elsewhere"), nil, 0o600))
			must(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "out")))
			return filepath.Join(dir, "out")
		}, true, "symlink"},
		{"dangling symlink", func(t *testing.T, dir string) string {
			must(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "out")))
			return filepath.Join(dir, "out")
		}, true, "symlink"},
		{"symlinked parent", func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "real"), 0o700))
			must(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")))
			return filepath.Join(dir, "link", "out")
		}, false, "symlink"},
		{"symlinked ancestor", func(t *testing.T, dir string) string {
			must(t, os.MkdirAll(filepath.Join(dir, "real", "a", "b"), 0o700))
			must(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")))
			return filepath.Join(dir, "link", "a", "b", "out")
		}, false, "symlink"},
		{"directory at the path", func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "out"), 0o700))
			return filepath.Join(dir, "out")
		}, true, "not a regular file"},
		{"world-writable parent without sticky bit", func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "shared")
			must(t, os.Mkdir(d, 0o700))
			must(t, os.Chmod(d, 0o777))
			return filepath.Join(d, "out")
		}, false, "chmod go-w"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := c.setup(t, dir)
			f, err := Create(p, "keys file (--keys-out)", c.force)
			if err == nil {
				f.Close()
				t.Fatalf("Create(%s) succeeded; want a refusal mentioning %q", p, c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "keys file (--keys-out)") {
				t.Errorf("err = %v; want it to name the file and say %q", err, c.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "elsewhere")); len(b) > 0 {
				t.Error("written through the symlink")
			}
		})
	}
}

func TestCreateIs0600AndForceReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new", "out")
	if err := WriteFile(p, "entry", []byte("one"), false); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing directory: err = %v; want it named (only MkdirParent creates one)", err)
	}
	must(t, MkdirParent(p, "entry"))
	must(t, WriteFile(p, "entry", []byte("one"), false))
	fi, err := os.Stat(p)
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %04o, want 0600", fi.Mode().Perm())
	}
	if d, _ := os.Stat(filepath.Dir(p)); d.Mode().Perm() != 0o700 {
		t.Errorf("directory created with mode %04o, want 0700", d.Mode().Perm())
	}
	// an old 0644 file with a second hard link: --force replaces the name,
	// and the other link keeps the old content
	must(t, os.Chmod(p, 0o644))
	must(t, os.Link(p, filepath.Join(dir, "other")))
	must(t, WriteFile(p, "entry", []byte("two"), true))
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q, want two", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "other")); string(b) != "one" {
		t.Errorf("the hard link's content became %q: written through it", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced with mode %04o, want 0600", fi.Mode().Perm())
	}
}

func TestOpenRefusesHardLinks(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a"), nil, 0o600))
	must(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
	if _, err := Open(filepath.Join(dir, "b"), "audit log", os.O_WRONLY|os.O_APPEND); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("err = %v; want a hard-link refusal", err)
	}
}
