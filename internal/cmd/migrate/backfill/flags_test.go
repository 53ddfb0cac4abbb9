package backfill

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags_DDB_API_02: every numeric flag at and just past its bounds: a
// usage error (exit 2) naming the range before any AWS call, or a run.
func TestFlags_DDB_API_02(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--segments", "0"}, "--segments 1 to 1000"},
		{[]string{"--segments", "1"}, ""},
		{[]string{"--segments", "1000"}, ""},
		{[]string{"--segments", "1001"}, "--segments 1 to 1000"},
		{[]string{"--writers", "0"}, "--writers 1 to 64"},
		{[]string{"--writers", "1"}, ""},
		{[]string{"--writers", "64"}, ""},
		{[]string{"--writers", "65"}, "--writers 1 to 64"},
		{[]string{"--max-writes-per-second", "-1"}, "--max-writes-per-second >= 0"},
		{[]string{"--max-writes-per-second", "0"}, ""},
		{[]string{"--source", ""}, "needs --source TABLE and --routes FILE"},
		{[]string{"--routes", ""}, "needs --source TABLE and --routes FILE"},
	} {
		cmdtest.ExpectUsage(t, NewCmdBackfill, tc.wantErr, append([]string{"--source", "dev-a-single", "--routes", "routes.yaml"}, tc.args...)...)
	}
}
