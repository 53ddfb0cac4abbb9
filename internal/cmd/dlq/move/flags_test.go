package move

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// TestVisibilityTimeoutBounds: move takes a --visibility-timeout from 10s to
// 12h, both included (usage error outside, before any AWS call).
func TestVisibilityTimeoutBounds(t *testing.T) {
	for _, tc := range []struct {
		v       string
		wantErr string
	}{
		{"9s", "--visibility-timeout 9s: pass between 10s and 12h"},
		{"10s", ""},
		{"12h", ""},
		{"12h0m1s", "pass between 10s and 12h"},
	} {
		ios, _, _, _ := iostreams.Test()
		ran := false
		cmd := NewCmdMove(factory.New(ios), func(context.Context, *Options) error { ran = true; return nil })
		cmd.SetArgs([]string{"--queue", "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq", "--visibility-timeout", tc.v})
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		if tc.wantErr == "" && (err != nil || !ran) || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !factory.IsUsageError(err) || ran) {
			t.Errorf("--visibility-timeout %s: err %v, ran %v; want %q", tc.v, err, ran, tc.wantErr)
		}
	}
}

// TestVisibilityTimeoutDefault: without the flag a message being moved stays
// hidden for 60 s (inside the bounds above, so the default runs).
func TestVisibilityTimeoutDefault(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdMove(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--queue", "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.VisibilityTimeout != 60*time.Second {
		t.Errorf("default --visibility-timeout %s, want 1m0s", got.VisibilityTimeout)
	}
}
