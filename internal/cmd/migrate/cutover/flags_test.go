package cutover

import (
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestTimingFlags: --settle may be 0, --drain-timeout must be positive (usage
// error before any AWS call otherwise).
func TestTimingFlags(t *testing.T) {
	cmdtest.ExpectUsages(t, NewCmdCutover, []string{"--source", "dev-a-single", "--routes", "routes.yaml"}, []cmdtest.Case{
		{Args: []string{"--drain-timeout", "0s"}, WantErr: "--drain-timeout 0s is out of range: use 1s or more"},
		{Args: []string{"--drain-timeout", "1s"}},
		{Args: []string{"--settle", "0s"}},
		{Args: []string{"--settle", "-1s"}, WantErr: "--settle -1s is out of range: use 0s or more"},
		{Args: []string{"--value", ""}, WantErr: "--value is empty"},
	})
}

// TestTimingDefaults: 2 s of settling after the fence, 5 minutes to drain.
func TestTimingDefaults(t *testing.T) {
	got, err := cmdtest.Parse(t, NewCmdCutover, "--source", "dev-a-single", "--routes", "routes.yaml")
	if err != nil || got == nil {
		t.Fatalf("err %v", err)
	}
	if got.Settle != 2*time.Second || got.DrainTimeout != 5*time.Minute {
		t.Errorf("settle %s, drain timeout %s; want 2s, 5m0s", got.Settle, got.DrainTimeout)
	}
}
