package plan

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --sample >= 0 (0: the whole table) and --segments 1 to 1000; a
// usage error (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--sample", "-1"}, "--sample must be >= 0"},
		{[]string{"--sample", "0"}, ""},
		{[]string{"--segments", "0"}, "--segments 1 to 1000"},
		{[]string{"--segments", "1"}, ""},
		{[]string{"--segments", "1000"}, ""},
		{[]string{"--segments", "1001"}, "--segments 1 to 1000"},
		{[]string{"--routes", ""}, "needs --source TABLE and --routes FILE"},
	} {
		cmdtest.ExpectUsage(t, NewCmdPlan, tc.wantErr, append([]string{"--source", "dev-a-single", "--routes", "routes.yaml"}, tc.args...)...)
	}
}
