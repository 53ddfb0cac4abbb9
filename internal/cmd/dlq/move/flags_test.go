package move

import (
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

const dlq = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq"

// TestVisibilityTimeoutBounds: move takes a --visibility-timeout from 10s to
// 12h, both included (usage error outside, before any AWS call).
func TestVisibilityTimeoutBounds(t *testing.T) {
	for _, tc := range []struct {
		v       string
		wantErr string
	}{
		{"9s", "--visibility-timeout 9s is out of range: use 10s to 12h"},
		{"10s", ""},
		{"12h", ""},
		{"12h0m1s", "--visibility-timeout 12h0m1s is out of range: use 10s to 12h"},
	} {
		cmdtest.ExpectUsage(t, NewCmdMove, tc.wantErr, "--queue", dlq, "--visibility-timeout", tc.v)
	}
}

// TestVisibilityTimeoutDefault: without the flag a message being moved stays
// hidden for 60 s (inside the bounds above, so the default runs).
func TestVisibilityTimeoutDefault(t *testing.T) {
	got, err := cmdtest.Parse(t, NewCmdMove, "--queue", dlq)
	if err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.VisibilityTimeout != 60*time.Second {
		t.Errorf("default --visibility-timeout %s, want 1m0s", got.VisibilityTimeout)
	}
}
