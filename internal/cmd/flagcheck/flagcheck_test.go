package flagcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Duration("critical", 4*time.Hour, "critical age")
	Range(fs, "critical", "1s", "24h", "a stream keeps records 24 h")
	fs.Duration("timeout", 0, "bound")
	Range(fs, "timeout", "", "24h", "")
	fs.Duration("wait-timeout", 0, "")
	fs.Int("segments", 4, "segments")
	Range(fs, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fs.Int("sample", 10, "")
	Range(fs, "sample", "1", "", "")
	fs.Int("max", 0, "")
	fs.Float64("ratio", 1, "")
	return fs
}

// TestCheck: each declared range refused below and above with the one
// shape, its bounds accepted; an undeclared flag refused below 0 only.
func TestCheck(t *testing.T) {
	const shape = " is out of range: use "
	cases := []struct {
		args    []string
		wantErr string // "" accepted
	}{
		{nil, ""},
		{[]string{"--critical", "-1h"}, "--critical -1h0m0s is out of range: use 1s to 24h (a stream keeps records 24 h)"},
		{[]string{"--critical", "0s"}, "--critical 0s is out of range: use 1s to 24h (a stream keeps records 24 h)"},
		{[]string{"--critical", "999ms"}, "--critical 999ms" + shape + "1s to 24h"},
		{[]string{"--critical", "25h"}, "--critical 25h0m0s" + shape + "1s to 24h"},
		{[]string{"--critical", "1s"}, ""},
		{[]string{"--critical", "24h"}, ""},
		{[]string{"--timeout", "-2s"}, "--timeout -2s" + shape + "0s to 24h"},
		{[]string{"--timeout", "24h0m1s"}, "--timeout 24h0m1s" + shape + "0s to 24h"},
		{[]string{"--timeout", "0s"}, ""},
		{[]string{"--segments", "0"}, "--segments 0" + shape + "1 to 1000000 (DynamoDB Scan"},
		{[]string{"--segments", "-4"}, "--segments -4" + shape + "1 to 1000000"},
		{[]string{"--segments", "1000001"}, "--segments 1000001" + shape + "1 to 1000000"},
		{[]string{"--segments", "1000000"}, ""},
		{[]string{"--sample", "0"}, "--sample 0" + shape + "1 or more"},
		{[]string{"--sample", "100000000"}, ""},
		{[]string{"--max", "-1"}, "--max -1" + shape + "0 or more"},
		{[]string{"--max", "0"}, ""},
		{[]string{"--ratio", "-0.5"}, "--ratio -0.5" + shape + "0 or more"},
		{[]string{"--wait-timeout", "-1m"}, "--wait-timeout -1m0s" + shape + "0s or more"},
		{[]string{"--wait-timeout", "0s"}, ""},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flags()
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

// TestRangeInHelp: the declared range is on the flag's --help line.
func TestRangeInHelp(t *testing.T) {
	fs := flags()
	for name, want := range map[string]string{"critical": "critical age (1s to 24h)", "segments": "segments (1 to 1000000)", "timeout": "bound (0s to 24h)"} {
		if got := fs.Lookup(name).Usage; got != want {
			t.Errorf("--%s usage %q, want %q", name, got, want)
		}
	}
}

// TestRangeRefusesABadDeclaration: a bound in the wrong syntax or a flag
// that is not there is a programming error, caught at once.
func TestRangeRefusesABadDeclaration(t *testing.T) {
	for _, tc := range []struct{ name, min string }{{"segments", "1s"}, {"critical", "1"}, {"nope", "1"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Range(--%s, %q) did not panic", tc.name, tc.min)
				}
			}()
			Range(flags(), tc.name, tc.min, "", "")
		}()
	}
}

// TestDurationsTakeDays: after Durations, a duration flag takes days (alone,
// fractional, combined with Go's units), its range still applies to the
// value in hours, and a value that does not parse is refused naming the
// flag and the units; other flags are left alone.
func TestDurationsTakeDays(t *testing.T) {
	cases := []struct {
		flag, value string
		want        time.Duration
		err         string
	}{
		{"wait-timeout", "2d", 48 * time.Hour, ""},
		{"wait-timeout", "1.5d", 36 * time.Hour, ""},
		{"wait-timeout", "1d12h30m", 36*time.Hour + 30*time.Minute, ""},
		{"wait-timeout", "90s", 90 * time.Second, ""},
		{"wait-timeout", "2days", 0, `invalid argument "2days" for "--wait-timeout" flag: "2days" is not a duration: write a number and a unit, e.g. 90s, 15m, 2h or 2d`},
		{"wait-timeout", "d", 0, `"d" is not a duration`},
		{"critical", "2d", 0, "--critical 48h0m0s is out of range: use 1s to 24h"},
	}
	for _, c := range cases {
		t.Run(c.flag+"="+c.value, func(t *testing.T) {
			fs := flags()
			Durations(fs)
			err := fs.Parse([]string{"--" + c.flag, c.value})
			if err == nil {
				err = Check(fs)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			got, gerr := fs.GetDuration(c.flag)
			if err != nil || gerr != nil || got != c.want {
				t.Fatalf("%s = %v (%v, %v), want %v", c.flag, got, err, gerr, c.want)
			}
		})
	}
	fs := flags()
	Durations(fs)
	if err := fs.Parse([]string{"--segments", "2d"}); err == nil {
		t.Error("--segments 2d: an int flag does not take days")
	}
}
