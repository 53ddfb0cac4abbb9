package cutover

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// TestTimingFlags: --settle may be 0, --drain-timeout must be positive (usage
// error before any AWS call otherwise).
func TestTimingFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--drain-timeout", "0s"}, "--drain-timeout positive"},
		{[]string{"--drain-timeout", "1s"}, ""},
		{[]string{"--settle", "0s"}, ""},
	} {
		ios, _, _, _ := iostreams.Test()
		ran := false
		cmd := NewCmdCutover(factory.New(ios), func(context.Context, *Options) error { ran = true; return nil })
		cmd.SetArgs(append([]string{"--source", "dev-a-single", "--routes", "routes.yaml"}, tc.args...))
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		if tc.wantErr == "" && (err != nil || !ran) || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !factory.IsUsageError(err) || ran) {
			t.Errorf("%v: err %v, ran %v; want %q", tc.args, err, ran, tc.wantErr)
		}
	}
}

// TestTimingDefaults: 2 s of settling after the fence, 5 minutes to drain.
func TestTimingDefaults(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdCutover(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--source", "dev-a-single", "--routes", "routes.yaml"})
	if err := cmd.Execute(); err != nil || got == nil {
		t.Fatalf("err %v", err)
	}
	if got.Settle != 2*time.Second || got.DrainTimeout != 5*time.Minute {
		t.Errorf("settle %s, drain timeout %s; want 2s, 5m0s", got.Settle, got.DrainTimeout)
	}
}
