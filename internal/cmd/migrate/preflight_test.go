package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/migrate"
	"github.com/dynops/dynops/internal/iostreams"
)

// noPreflight are the writing migrate commands that do not run the plan's
// validation, and why.
var noPreflight = map[string]string{
	"rollback": "it undoes the cutover (lifts the fence, puts the pointer back): a problem of the routes must never keep the source fenced",
}

// TestEveryWritingStepRunsThePreflight walks the migrate commands: each
// one that declares cmdfacts.Writes calls shared.Preflight (the plan's
// validation) in its run function before its confirmation and first write,
// unless noPreflight says why not. A new writing step that forgets it
// fails here (issue 43: a rename refused by plan was written by backfill).
func TestEveryWritingStepRunsThePreflight(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	writers := 0
	for _, c := range migrate.NewCmdMigrate(factory.New(ios)).Commands() {
		if changes, _ := cmdfacts.Changes(c); !changes {
			continue
		}
		writers++
		dir := strings.ReplaceAll(c.Name(), "-", "")
		src := commandSource(t, dir)
		if why, ok := noPreflight[c.Name()]; ok {
			assert.NotContains(t, src, "shared.Preflight(", "%s is listed in noPreflight (%s) but calls it: remove it from the list", c.Name(), why)
			continue
		}
		at := strings.Index(src, "shared.Preflight(")
		if !assert.GreaterOrEqual(t, at, 0, "dynops migrate %s writes (cmdfacts.Writes) but never calls shared.Preflight: run the plan's validation before its first write (internal/cmd/migrate/%s)", c.Name(), dir) {
			continue
		}
		// The guard (shared.ConfirmWrites / Confirm) may come first: a
		// protected target is refused before anything else is read.
		for _, later := range []string{"migrate.Backfill(", "migrate.CatchUp(", "migrate.Cutover("} {
			if i := strings.Index(src, later); i >= 0 {
				assert.Less(t, at, i, "dynops migrate %s calls %s before shared.Preflight: the validation comes first", c.Name(), later)
			}
		}
	}
	require.GreaterOrEqual(t, writers, 4, "the walk found too few writing migrate commands: it is broken")
	for name := range noPreflight {
		found := false
		for _, c := range migrate.NewCmdMigrate(factory.New(ios)).Commands() {
			found = found || c.Name() == name
		}
		assert.True(t, found, "noPreflight names %s, which is no migrate command", name)
	}
}

// commandSource is the non-test Go source of a command's folder.
func commandSource(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no source in internal/cmd/migrate/%s", dir)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}
