package inspect

import (
	"fmt"
	"testing"

	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/redrive"
)

func TestExitCode(t *testing.T) {
	ok, crit, lost, bad := redrive.StateOK, redrive.StateCritical, redrive.StateLost, redrive.StateMalformed
	cases := []struct {
		counts map[string]int
		want   int
	}{
		{map[string]int{}, exitcode.OK},
		{map[string]int{ok: 3}, exitcode.OK},
		{map[string]int{ok: 3, crit: 1}, exitcode.Critical},
		{map[string]int{crit: 2}, exitcode.Critical},
		{map[string]int{lost: 1}, exitcode.Lost},
		{map[string]int{bad: 1}, exitcode.Lost},
		{map[string]int{ok: 1, crit: 1, lost: 1}, exitcode.Lost},
		{map[string]int{crit: 5, bad: 1}, exitcode.Lost},
		{map[string]int{ok: 0, crit: 0, lost: 0, bad: 0}, exitcode.OK},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.counts), func(t *testing.T) {
			if got := ExitCode(tc.counts); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.counts, got, tc.want)
			}
		})
	}
}
