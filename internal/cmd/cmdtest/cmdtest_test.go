package cmdtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
)

type opts struct{ N int }

// newCmd is a command with one check: --n must not be 3.
func newCmd(f *factory.Factory, runF func(context.Context, *opts) error) *cobra.Command {
	o := &opts{}
	cmd := &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error {
		if o.N == 3 {
			return factory.UsageErrorf("--n 3: pass another number")
		}
		if o.N == 4 {
			return fmt.Errorf("--n 4: not a usage error")
		}
		return runF(cmd.Context(), o)
	}}
	cmd.Flags().IntVar(&o.N, "n", 1, "")
	return cmd
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestParse(t *testing.T) {
	got, err := Parse(t, newCmd, "--n", "7")
	if err != nil || got == nil || got.N != 7 {
		t.Fatalf("got %+v, err %v", got, err)
	}
	got, err = Parse(t, newCmd, "--n", "3")
	if err == nil || got != nil {
		t.Fatalf("a refused run: got %+v, err %v", got, err)
	}
}

// TestExpectUsage: it passes a case that behaves as said and fails every
// other: a refusal where a run was due, a run where a refusal was due, the
// wrong message, an error that is not a usage error.
func TestExpectUsage(t *testing.T) {
	for _, tc := range []struct {
		wantErr  string
		n        string
		wantFail bool
	}{
		{"", "7", false},
		{"--n 3: pass another number", "3", false},
		{"", "3", true},
		{"--n 3", "7", true},
		{"another message", "3", true},
		{"--n 4", "4", true},
	} {
		r := &recorder{TB: t}
		ExpectUsage(r, newCmd, tc.wantErr, "--n", tc.n)
		if r.failed != tc.wantFail {
			t.Errorf("want %q with --n %s: failed %v, want %v", tc.wantErr, tc.n, r.failed, tc.wantFail)
		}
	}
}

// TestExpectUsages: each case runs with the base args before its own, and
// one case that does not behave as said fails the table.
func TestExpectUsages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     []string
		cases    []Case
		wantFail bool
	}{
		{"every row as said", nil, []Case{{}, {Args: []string{"--n", "3"}, WantErr: "--n 3"}, {Args: []string{"--n", "7"}}}, false},
		{"the base comes first: a row's --n wins", []string{"--n", "3"}, []Case{{Args: []string{"--n", "7"}}}, false},
		{"the base alone", []string{"--n", "3"}, []Case{{WantErr: "--n 3"}}, false},
		{"one row wrong", nil, []Case{{}, {Args: []string{"--n", "3"}}}, true},
	} {
		r := &recorder{TB: t}
		ExpectUsages(r, newCmd, tc.base, tc.cases)
		if r.failed != tc.wantFail {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.wantFail)
		}
	}
}
