package export

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportwindow"
)

// TestExportFullExitsNonZeroWhenFailed: `export full` without --wait reads
// the export back, and an export that is already FAILED (here: into a
// bucket that does not exist) exits 1 with the failure, so scripts notice.
func TestExportFullExitsNonZeroWhenFailed(t *testing.T) {
	fx := newFixture(t, 3)
	out, errOut, code := fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket+"-missing", "-o", "json")
	if code == 0 {
		var es []export.Export
		require.NoError(t, json.Unmarshal([]byte(out), &es))
		require.Len(t, es, 1)
		require.NotEqual(t, exportwindow.Failed, es[0].Status, "a FAILED export must not exit 0")
		target.RequireAWS(t, "accepts an export into a missing bucket ("+es[0].Status+")")
	}
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, fx.bucket+"-missing")
}
