package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoWrapper runs the wrapper gremlins calls as go, over a stand-in for
// the real go that prints its arguments and exits as told: a build failure
// is NOT VIABLE (exit 2), a failing test a kill (exit 1), and gremlins'
// fallback to the module root (a package named other than its folder) tests
// the folder gremlins runs over instead.
func TestGoWrapper(t *testing.T) {
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "go")
	realGo := filepath.Join(dir, "realgo")
	if err := os.WriteFile(wrapper, []byte(goWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(realGo, []byte("#!/bin/sh\necho \"args: $*\"\nprintf '%s\\n' \"$FAKE_OUT\"\nexit $FAKE_RC\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const module = "github.com/dynops/dynops"
	for _, tc := range []struct {
		name     string
		args     []string
		module   string
		out      string
		rc       string
		wantArgs string
		wantRC   int
	}{
		{"passing mutant run", []string{"test", "-failfast", module + "/internal/x"}, module, "ok", "0", "test -failfast " + module + "/internal/x", 0},
		{"a failing test kills", []string{"test", module + "/internal/x"}, module, "--- FAIL: TestX", "1", "test " + module + "/internal/x", 1},
		{"a build failure is not viable", []string{"test", module + "/internal/x"}, module, "# " + module + "/internal/x\nx.go:1: undefined: y", "1", "test " + module + "/internal/x", 2},
		{"a setup failure is not viable", []string{"test", module + "/internal/x"}, module, "FAIL\t" + module + " [setup failed]", "1", "test " + module + "/internal/x", 2},
		{"the module root becomes the folder", []string{"test", "-timeout", "7s", "-failfast", module}, module, "--- FAIL: TestX", "1", "test -timeout 7s -failfast " + module + "/internal/cmd/export/import/...", 1},
		{"arguments with spaces kept whole", []string{"test", "-run", "^(TestA|TestB)$", module}, module, "ok", "0", "test -run ^(TestA|TestB)$ " + module + "/internal/cmd/export/import/...", 0},
		{"a module root that has a package is kept", []string{"test", module}, "", "ok", "0", "test " + module, 0},
		{"other commands pass through", []string{"list", module}, module, "x", "3", "list " + module, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(wrapper, tc.args...)
			cmd.Env = append(os.Environ(), "DYNOPS_REAL_GO="+realGo, "DYNOPS_MUTATE_MODULE="+tc.module,
				"DYNOPS_MUTATE_DIR="+module+"/internal/cmd/export/import/...", "FAKE_OUT="+tc.out, "FAKE_RC="+tc.rc)
			out, err := cmd.CombinedOutput()
			rc := 0
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if first := strings.SplitN(string(out), "\n", 2)[0]; first != "args: "+tc.wantArgs {
				t.Errorf("real go got %q, want %q", first, "args: "+tc.wantArgs)
			}
			if rc != tc.wantRC {
				t.Errorf("exit %d, want %d; output:\n%s", rc, tc.wantRC, out)
			}
		})
	}
}

// TestPackagelessModule: the module path only when the top folder has no Go
// package, so the wrapper never replaces a real package's tests.
func TestPackagelessModule(t *testing.T) {
	got, err := packagelessModule("../../..")
	if err != nil || got != "github.com/dynops/dynops" {
		t.Fatalf("this repository: %q, %v", got, err)
	}
	dir := t.TempDir()
	if _, err := packagelessModule(dir); err == nil || !strings.Contains(err.Error(), "module path") {
		t.Errorf("no go.mod: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := packagelessModule(dir); err == nil || !strings.Contains(err.Error(), "no module line") {
		t.Errorf("no module line: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := packagelessModule(dir); err != nil || got != "example.com/m" {
		t.Errorf("no Go files: %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := packagelessModule(dir); err != nil || got != "" {
		t.Errorf("a package at the top: %q, %v", got, err)
	}
}
