package shared

import "testing"

func TestFirstOf(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{[]string{"", "a", "b"}, "a"}, {[]string{"b", "a"}, "b"}, {[]string{"", ""}, ""}, {nil, ""}} {
		if got := FirstOf(c.in...); got != c.want {
			t.Errorf("FirstOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
