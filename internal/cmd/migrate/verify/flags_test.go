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
		{Args: []string{"--shard", "1/2"}},
		{Args: []string{"--shard", "2/2"}, WantErr: `--shard "2/2": want I/N with 0 <= I < N`},
		{Args: []string{"--combine", "s0.json", "--combine", "s1.json"}},
		{Args: []string{"--shard", "0/2", "--combine", "s0.json"}, WantErr: "--combine adds up the results of every shard: give it without --shard"},
	})
}
