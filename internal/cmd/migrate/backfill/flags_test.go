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
		{Args: []string{"--segments", "0"}, WantErr: "--segments 0 is out of range: use 1 to 1000000"},
		{Args: []string{"--segments", "1"}},
		{Args: []string{"--segments", "1000000"}},
		{Args: []string{"--segments", "1000001"}, WantErr: "--segments 1000001 is out of range: use 1 to 1000000"},
		{Args: []string{"--writers", "0"}, WantErr: "--writers 0 is out of range: use 1 to 64"},
		{Args: []string{"--writers", "1"}},
		{Args: []string{"--writers", "64"}},
		{Args: []string{"--writers", "65"}, WantErr: "--writers 65 is out of range: use 1 to 64"},
		{Args: []string{"--max-writes-per-second", "-1"}, WantErr: "--max-writes-per-second -1 is out of range: use 0 or more"},
		{Args: []string{"--max-writes-per-second", "0"}},
		{Args: []string{"--source", ""}, WantErr: "needs --source TABLE and --routes FILE"},
		{Args: []string{"--routes", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
