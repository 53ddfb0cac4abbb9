package catchup

import (
	"testing"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: --interval must be positive and --workers 1 to 256; a usage
// error (exit 2) before any AWS call, or a run.
func TestFlags(t *testing.T) {
	cmdtest.ExpectUsages(t, NewCmdCatchUp, []string{"--source", "dev-a-single", "--routes", "routes.yaml"}, []cmdtest.Case{
		{},
		{Args: []string{"--interval", "0s"}, WantErr: "--interval 0s is out of range: use 1ms or more"},
		{Args: []string{"--interval", "-1s"}, WantErr: "--interval -1s is out of range: use 1ms or more"},
		{Args: []string{"--interval", "999us"}, WantErr: "--interval 999µs is out of range: use 1ms or more"},
		{Args: []string{"--interval", "1ms"}},
		{Args: []string{"--workers", "0"}, WantErr: "--workers 0 is out of range: use 1 to 256"},
		{Args: []string{"--workers", "1"}},
		{Args: []string{"--workers", "256"}},
		{Args: []string{"--workers", "257"}, WantErr: "--workers 257 is out of range: use 1 to 256"},
		{Args: []string{"--source", ""}, WantErr: "needs --source TABLE and --routes FILE"},
	})
}
