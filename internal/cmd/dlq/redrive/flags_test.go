package redrive

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// TestFlags: redrive's own checks, before any AWS call: a usage error that
// names the flag and the fix, and nothing run; each bound itself allowed.
func TestFlags(t *testing.T) {
	const q = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq"
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{}, "redrive needs --queue URL"},
		{[]string{"--queue", q, "--function", "f", "--to-queue", q + "2"}, "--function or --to-queue, not both"},
		{[]string{"--queue", q, "--to-queue", q}, "--to-queue is the DLQ itself"},
		{[]string{"--queue", q, "--max", "-1"}, "--max -1: pass a positive number, or 0 for all"},
		{[]string{"--queue", q, "--max", "0"}, ""},
		{[]string{"--queue", q, "--concurrency", "0"}, "--concurrency 0: pass 1 to 64"},
		{[]string{"--queue", q, "--concurrency", "1"}, ""},
		{[]string{"--queue", q, "--concurrency", "64"}, ""},
		{[]string{"--queue", q, "--concurrency", "65"}, "--concurrency 65: pass 1 to 64"},
		{[]string{"--queue", q, "--visibility-timeout", "9s"}, "--visibility-timeout 9s: pass between 10s and 12h"},
		{[]string{"--queue", q, "--visibility-timeout", "10s"}, ""},
		{[]string{"--queue", q, "--visibility-timeout", "12h"}, ""},
		{[]string{"--queue", q, "--visibility-timeout", "12h0m1s"}, "pass between 10s and 12h"},
	} {
		ios, _, _, _ := iostreams.Test()
		var got *Options
		cmd := NewCmdRedrive(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		ran := got != nil
		if tc.wantErr == "" && (err != nil || !ran) || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !factory.IsUsageError(err) || ran) {
			t.Errorf("%v: err %v, ran %v; want %q", tc.args, err, ran, tc.wantErr)
		}
	}
}

// TestFlagDefaults: all messages, one at a time, each hidden 5 min.
func TestFlagDefaults(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdRedrive(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--queue", "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-a-dlq"})
	if err := cmd.Execute(); err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.Max != 0 || got.Concurrency != 1 || got.VisibilityTimeout != 5*time.Minute || got.DiscardExpired {
		t.Errorf("defaults: --max %d --concurrency %d --visibility-timeout %s --discard-expired %v", got.Max, got.Concurrency, got.VisibilityTimeout, got.DiscardExpired)
	}
}
