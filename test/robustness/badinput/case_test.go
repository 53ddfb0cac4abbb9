package badinput

import (
	"context"
	"strings"
	"testing"
)

// badCase is one bad input: the run, the exit code it must give (0: any
// non-zero) and what its message must name.
type badCase struct {
	name string
	inv  invocation
	code int
	// want are substrings of stderr: what is wrong, named.
	want []string
}

// check runs c and asserts: non-zero exit (c.code when set), every want in
// stderr, and the emulator's state as seeded.
func check(t *testing.T, x *world, c badCase) {
	t.Helper()
	r := dynops(t, c.inv)
	if r.code == 0 {
		t.Errorf("dynops %s: exit 0, want a refusal\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.stdout, r.stderr)
	} else if c.code != 0 && r.code != c.code {
		t.Errorf("dynops %s: exit %d, want %d\nstderr: %s", strings.Join(r.args, " "), r.code, c.code, r.stderr)
	}
	for _, w := range c.want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("dynops %s: stderr does not name %q:\n%s", strings.Join(r.args, " "), w, r.stderr)
		}
	}
	after, err := take(context.Background(), x.c)
	if err != nil {
		t.Fatalf("snapshot after the case: %v", err)
	}
	if d := diff(x.baseline, after); d != "" {
		t.Fatalf("dynops %s changed the emulator's state:\n%s\nstderr: %s", strings.Join(r.args, " "), d, r.stderr)
	}
}

// accepted runs a control: the same command as a refused case, in a form
// that must pass (e.g. a dry run with the right --confirm), proving the
// refusal came from the guard and not from some other mistake in the case.
func accepted(t *testing.T, _ *world, inv invocation) {
	t.Helper()
	r := dynops(t, inv)
	if r.code != 0 {
		t.Errorf("control dynops %s: exit %d, want 0 (the case's refusal must come from the guard)\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
	}
	// Its state is checked by the snapshot after the next case.
}

// unchanged asserts the state is still the seeded one (after the last control).
func unchanged(t *testing.T, x *world) {
	t.Helper()
	after, err := take(context.Background(), x.c)
	if err != nil {
		t.Fatalf("final snapshot: %v", err)
	}
	if d := diff(x.baseline, after); d != "" {
		t.Fatalf("the state changed:\n%s", d)
	}
}
