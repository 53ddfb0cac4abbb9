package redrive

import (
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

const dlq = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq"

// TestFlags: redrive's own checks, before any AWS call: a usage error that
// names the flag and the fix, and nothing run; each bound itself allowed.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{}, "redrive needs --queue URL"},
		{[]string{"--queue", dlq, "--function", "f", "--to-queue", dlq + "2"}, "--function or --to-queue, not both"},
		{[]string{"--queue", dlq, "--to-queue", dlq}, "--to-queue is the DLQ itself"},
		{[]string{"--queue", dlq, "--max", "-1"}, "--max -1 is out of range: use 0 or more"},
		{[]string{"--queue", dlq, "--max", "0"}, ""},
		{[]string{"--queue", dlq, "--concurrency", "0"}, "--concurrency 0 is out of range: use 1 to 64"},
		{[]string{"--queue", dlq, "--concurrency", "1"}, ""},
		{[]string{"--queue", dlq, "--concurrency", "64"}, ""},
		{[]string{"--queue", dlq, "--concurrency", "65"}, "--concurrency 65 is out of range: use 1 to 64"},
		{[]string{"--queue", dlq, "--visibility-timeout", "9s"}, "--visibility-timeout 9s is out of range: use 10s to 12h"},
		{[]string{"--queue", dlq, "--visibility-timeout", "10s"}, ""},
		{[]string{"--queue", dlq, "--visibility-timeout", "12h"}, ""},
		{[]string{"--queue", dlq, "--visibility-timeout", "12h0m1s"}, "--visibility-timeout 12h0m1s is out of range: use 10s to 12h"},
	} {
		cmdtest.ExpectUsage(t, NewCmdRedrive, tc.wantErr, tc.args...)
	}
}

// TestFlagDefaults: all messages, one at a time, each hidden 5 min.
func TestFlagDefaults(t *testing.T) {
	got, err := cmdtest.Parse(t, NewCmdRedrive, "--queue", dlq)
	if err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.Max != 0 || got.Concurrency != 1 || got.VisibilityTimeout != 5*time.Minute || got.DiscardExpired {
		t.Errorf("defaults: --max %d --concurrency %d --visibility-timeout %s --discard-expired %v", got.Max, got.Concurrency, got.VisibilityTimeout, got.DiscardExpired)
	}
}
