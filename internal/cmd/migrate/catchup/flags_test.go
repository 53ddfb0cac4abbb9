package catchup

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --interval must be positive and --workers 1 to 256; a usage
// error (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--interval", "0s"}, "--interval must be positive"},
		{[]string{"--interval", "-1s"}, "--interval must be positive"},
		{[]string{"--interval", "1ns"}, ""},
		{[]string{"--workers", "0"}, "--workers 1 to 256"},
		{[]string{"--workers", "1"}, ""},
		{[]string{"--workers", "256"}, ""},
		{[]string{"--workers", "257"}, "--workers 1 to 256"},
		{[]string{"--source", ""}, "needs --source TABLE and --routes FILE"},
	} {
		cmdtest.ExpectUsage(t, NewCmdCatchUp, tc.wantErr, append([]string{"--source", "dev-a-single", "--routes", "routes.yaml"}, tc.args...)...)
	}
}
