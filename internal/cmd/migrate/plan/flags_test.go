package plan

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --sample >= 0 (0: the whole table) and --segments 1 to 1000; a
// usage error (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	cmdtest.ExpectUsages(t, NewCmdPlan, []string{"--source", "dev-a-single", "--routes", "routes.yaml"}, []cmdtest.Case{
		{},
		{Args: []string{"--sample", "-1"}, WantErr: "--sample must be >= 0"},
		{Args: []string{"--sample", "0"}},
		{Args: []string{"--segments", "0"}, WantErr: "--segments 1 to 1000"},
		{Args: []string{"--segments", "1"}},
		{Args: []string{"--segments", "1000"}},
		{Args: []string{"--segments", "1001"}, WantErr: "--segments 1 to 1000"},
		{Args: []string{"--routes", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
