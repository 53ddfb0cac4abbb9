package root

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// TestFinishSaysWhatItWrote: the `finished` record's warning appears only
// when the record could not be written, and the "record appended" notice
// only for commands that take --yes.
func TestFinishSaysWhatItWrote(t *testing.T) {
	_, errOut, code, _ := run(t, "pitr", "restore", "--latest")
	if code != 2 || strings.Contains(errOut, "audit record incomplete") {
		t.Errorf("a refused run with a good log: exit %d, stderr %q", code, errOut)
	}
	loose := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(loose, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, stderr := iostreams.Test()
	code = Execute(context.Background(), factory.New(ios), "1.2.3", []string{"pitr", "restore", "--latest", "--audit-log", loose})
	if !strings.Contains(stderr.String(), "warning: audit record incomplete") {
		t.Errorf("a log that cannot be written: exit %d, no warning in %q", code, stderr.String())
	}
}
