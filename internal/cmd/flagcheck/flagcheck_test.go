package flagcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string // "" accepted
	}{
		{nil, ""},
		{[]string{"--critical", "-1h"}, "--critical -1h0m0s: a duration cannot be negative"},
		{[]string{"--critical", "0s"}, "--critical 0s is below 1s"},
		{[]string{"--critical", "25h"}, "--critical 25h0m0s is above 24h"},
		{[]string{"--critical", "2h"}, ""},
		{[]string{"--critical", "1s"}, ""},  // the bound itself is allowed
		{[]string{"--critical", "24h"}, ""}, // the bound itself is allowed
		{[]string{"--segments", "1000000"}, ""},
		{[]string{"--visibility-timeout", "-5s"}, "--visibility-timeout"},
		{[]string{"--visibility-timeout", "500ms"}, "is below 1s"},
		{[]string{"--visibility-timeout", "13h"}, "is above 12h"},
		{[]string{"--segments", "0"}, "--segments 0 is below 1"},
		{[]string{"--segments", "-4"}, "--segments -4: a count cannot be negative"},
		{[]string{"--segments", "2000000"}, "is above 1000000"},
		{[]string{"--segments", "8"}, ""},
		{[]string{"--workers", "0"}, "--workers 0 is below 1"},
		{[]string{"--concurrency", "-1"}, "--concurrency"},
		{[]string{"--parallel", "0"}, "--parallel"},
		{[]string{"--export-parallel", "0"}, "--export-parallel 0 is below 1"},
		{[]string{"--export-parallel", "1"}, ""},
		{[]string{"--export-parallel", "1025"}, "--export-parallel 1025 is above 1024"},
		{[]string{"--max", "-1"}, "--max -1: a count cannot be negative"},
		{[]string{"--max", "0"}, ""}, // 0: all
		{[]string{"--buckets", "-3"}, "--buckets"},
		{[]string{"--rate", "0"}, "--rate 0 is below 1"},
		{[]string{"--ratio", "-0.5"}, "--ratio -0.5: a count cannot be negative"},
		{[]string{"--wait-timeout", "-1m"}, "--wait-timeout"},
		{[]string{"--wait-timeout", "0s"}, ""}, // 0: no limit
		{[]string{"--timeout", "-2s"}, "--timeout"},
		{[]string{"--timeout", "48h"}, "is above 24h"},
		{[]string{"--replication-timeout", "0s"}, "--replication-timeout"},
		{[]string{"--latency-window", "10s"}, "--latency-window"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			fs.Duration("critical", 4*time.Hour, "")
			fs.Duration("visibility-timeout", time.Minute, "")
			fs.Duration("wait-timeout", 0, "")
			fs.Duration("timeout", 0, "")
			fs.Duration("replication-timeout", time.Minute, "")
			fs.Duration("latency-window", 15*time.Minute, "")
			fs.Int("segments", 4, "")
			fs.Int("workers", 8, "")
			fs.Int("concurrency", 1, "")
			fs.Int("parallel", 4, "")
			fs.Int("export-parallel", 4, "")
			fs.Int("max", 0, "")
			fs.Int("buckets", 0, "")
			fs.Int64("rate", 100, "")
			fs.Float64("ratio", 1, "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := Check(fs)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Check = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestExample: the fix a refusal suggests is the flag's default, else its
// lower bound, else 0.
func TestExample(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Int("segments", 4, "")
	fs.Int("buckets", 0, "")
	fs.Duration("wait-timeout", 0, "")
	fs.Duration("settle", 0, "")
	for _, tc := range []struct {
		flag string
		b    Bound
		want string
	}{
		{"segments", Bound{Min: "1"}, "4"},
		{"buckets", Bound{Min: "1"}, "1"},
		{"buckets", Bound{}, "0"},
		{"wait-timeout", Bound{}, "0"},
		{"settle", Bound{Min: "1s"}, "1s"},
	} {
		if got := example(fs.Lookup(tc.flag), tc.b); got != tc.want {
			t.Errorf("example(--%s, %+v) = %q, want %q", tc.flag, tc.b, got, tc.want)
		}
	}
}
