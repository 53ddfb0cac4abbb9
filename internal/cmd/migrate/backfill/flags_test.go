package backfill

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags_DDB_API_02: every numeric flag at and just past its bounds: a
// usage error (exit 2) naming the range before any AWS call, or a run.
func TestFlags_DDB_API_02(t *testing.T) {
	cmdtest.ExpectUsages(t, NewCmdBackfill, []string{"--source", "dev-a-single", "--routes", "routes.yaml"}, []cmdtest.Case{
		{},
		{Args: []string{"--segments", "0"}, WantErr: "--segments 1 to 1000"},
		{Args: []string{"--segments", "1"}},
		{Args: []string{"--segments", "1000"}},
		{Args: []string{"--segments", "1001"}, WantErr: "--segments 1 to 1000"},
		{Args: []string{"--writers", "0"}, WantErr: "--writers 1 to 64"},
		{Args: []string{"--writers", "1"}},
		{Args: []string{"--writers", "64"}},
		{Args: []string{"--writers", "65"}, WantErr: "--writers 1 to 64"},
		{Args: []string{"--max-writes-per-second", "-1"}, WantErr: "--max-writes-per-second >= 0"},
		{Args: []string{"--max-writes-per-second", "0"}},
		{Args: []string{"--source", ""}, WantErr: "needs --source TABLE and --routes FILE"},
		{Args: []string{"--routes", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
