package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BinaryEnv names a dynops binary built beforehand for the suites that run
// dynops as a process. `make test-go` builds one from the checkout into
// .cache/ and sets it, so that a run links the binary once instead of once per
// package (each link of the CLI costs several CPU-seconds).
const BinaryEnv = "DYNOPS_TEST_BIN"

// binary returns the dynops binary for Target.Command: $DYNOPS_TEST_BIN
// when set, else ./cmd/dynops built once per test process and removed when
// Main or Run returns. Tests never start it by hand (TestNoDynopsProcessByHand).
func binary(t testing.TB) string {
	t.Helper()
	bin, err := dynopsBinary()
	if err != nil {
		t.Fatalf("dynops binary: %v", err)
	}
	return bin
}

// BuildDynops builds (or finds) the binary ahead, for a TestMain that would
// rather fail before its first test than in each.
func BuildDynops() error {
	_, err := dynopsBinary()
	return err
}

var (
	dynopsBinary = sync.OnceValues(buildDynops)
	// builtDir is the folder of the binary built here (not of one named by
	// $DYNOPS_TEST_BIN); Main and Run remove it.
	builtDir string
)

func buildDynops() (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		fi, err := os.Stat(bin)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w (unset it to build ./cmd/dynops, or run `make test-go`, which builds it)", BinaryEnv, bin, err)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s is not an executable file (unset it to build ./cmd/dynops)", BinaryEnv, bin)
		}
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "dynops-bin-")
	if err != nil {
		return "", fmt.Errorf("a folder for the dynops binary: %w", err)
	}
	bin := filepath.Join(dir, "dynops")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dynops")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build ./cmd/dynops in %s: %v\n%s", cmd.Dir, err, out)
	}
	builtDir = dir
	return bin, nil
}

// removeBuilt removes the binary built by this process, if any.
func removeBuilt() {
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
}
