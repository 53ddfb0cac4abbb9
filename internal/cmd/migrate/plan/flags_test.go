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
		{Args: []string{"--sample", "-1"}, WantErr: "--sample -1 is out of range: use 0 or more"},
		{Args: []string{"--sample", "0"}},
		{Args: []string{"--segments", "0"}, WantErr: "--segments 0 is out of range: use 1 to 1000000"},
		{Args: []string{"--segments", "1"}},
		{Args: []string{"--segments", "1000000"}},
		{Args: []string{"--segments", "1000001"}, WantErr: "--segments 1000001 is out of range: use 1 to 1000000"},
		{Args: []string{"--routes", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
