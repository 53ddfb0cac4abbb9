package verify

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --segments 1 to 1000 and --sample at least 1; a usage error
// (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--segments", "0"}, "--segments: use 1 to 1000"},
		{[]string{"--segments", "1"}, ""},
		{[]string{"--segments", "1000"}, ""},
		{[]string{"--segments", "1001"}, "--segments: use 1 to 1000"},
		{[]string{"--sample", "0"}, "--sample 0: list at least 1 key"},
		{[]string{"--sample", "-3"}, "--sample -3: list at least 1 key"},
		{[]string{"--sample", "1"}, ""},
		{[]string{"--source", ""}, "needs --source TABLE and --routes FILE"},
	} {
		cmdtest.ExpectUsage(t, NewCmdVerify, tc.wantErr, append([]string{"--source", "dev-a-single", "--routes", "routes.yaml"}, tc.args...)...)
	}
}
