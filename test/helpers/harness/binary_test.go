package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildDynopsFromEnv: a binary named by DYNOPS_TEST_BIN is used as is;
// one that is missing, a folder or not executable is an error naming the
// variable and the path, never a silent build of something else.
func TestBuildDynopsFromEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "dynops")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, exe)
	got, err := buildDynops()
	if err != nil || got != exe {
		t.Fatalf("buildDynops() = %q, %v; want %q", got, err, exe)
	}
	for name, bin := range map[string]string{"missing": filepath.Join(dir, "nope"), "folder": dir, "not executable": plain} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(BinaryEnv, bin)
			got, err := buildDynops()
			if err == nil {
				t.Fatalf("buildDynops() = %q, want an error", got)
			}
			for _, want := range []string{BinaryEnv + "=" + bin, "unset it"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}
