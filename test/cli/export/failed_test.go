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
// the export back, and an export into a bucket that does not exist exits 1
// naming the bucket, so scripts notice. AWS starts the export and it reads
// back FAILED; the emulator (moto 5.2.1) refuses it at once with HTTP 500:
// both must exit non-zero, and a FAILED read-back must never exit 0.
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
