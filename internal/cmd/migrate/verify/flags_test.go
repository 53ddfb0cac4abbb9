package verify

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --segments 1 to 1000 and --sample at least 1; a usage error
// (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	cmdtest.ExpectUsages(t, NewCmdVerify, []string{"--source", "dev-a-single", "--routes", "routes.yaml"}, []cmdtest.Case{
		{},
		{Args: []string{"--segments", "0"}, WantErr: "--segments 0 is out of range: use 1 to 1000000"},
		{Args: []string{"--segments", "1"}},
		{Args: []string{"--segments", "1000000"}},
		{Args: []string{"--segments", "1000001"}, WantErr: "--segments 1000001 is out of range: use 1 to 1000000"},
		{Args: []string{"--sample", "0"}, WantErr: "--sample 0 is out of range: use 1 or more"},
		{Args: []string{"--sample", "-3"}, WantErr: "--sample -3 is out of range: use 1 or more"},
		{Args: []string{"--sample", "1"}},
		{Args: []string{"--source", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
