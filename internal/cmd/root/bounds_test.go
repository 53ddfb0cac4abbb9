package root

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/cmd/flagcheck"
)

// outside is a value just below (or above) b for flag f, in f's syntax.
func outside(t *testing.T, f *pflag.Flag, bound string, step int) string {
	t.Helper()
	if f.Value.Type() == "duration" {
		d, err := time.ParseDuration(bound)
		if err != nil {
			t.Fatal(err)
		}
		if d >= time.Second {
			return (d + time.Duration(step)*time.Second).String()
		}
		return (d + time.Duration(step)*time.Millisecond).String()
	}
	n, err := strconv.Atoi(bound)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(n + step)
}

// TestEveryBoundedFlagRefusedWithOneShape walks the command tree: every flag
// with a declared range shows it in --help and is refused just below and
// just above it (through root, exit 2) with the one message shape; the
// bounds themselves pass the check.
func TestEveryBoundedFlagRefusedWithOneShape(t *testing.T) {
	n := 0
	walk(newTree(t), func(c *cobra.Command) {
		if !c.Runnable() || c.HasSubCommands() {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		c.Flags().VisitAll(func(f *pflag.Flag) {
			b := flagcheck.BoundOf(f)
			if b == (flagcheck.Bound{}) {
				return
			}
			zero := "0"
			if f.Value.Type() == "duration" {
				zero = "0s"
			}
			if !strings.HasSuffix(f.Usage, "("+b.Text(zero)+")") {
				t.Errorf("%s --%s: --help %q does not show its range %q", c.CommandPath(), f.Name, f.Usage, b.Text(zero))
			}
			var bad []string
			if b.Min != "" {
				bad = append(bad, outside(t, f, b.Min, -1))
			} else {
				bad = append(bad, "-1"+strings.TrimPrefix(zero, "0"))
			}
			if b.Max != "" {
				bad = append(bad, outside(t, f, b.Max, +1))
			}
			for _, v := range bad {
				n++
				_, errOut, code, _ := run(t, append(append([]string{}, path...), "--"+f.Name, v)...)
				want := fmt.Sprintf(" is out of range: use %s", b.Text(zero))
				if code != 2 || !strings.HasPrefix(errOut, "error: --"+f.Name+" ") || !strings.Contains(errOut, want) {
					t.Errorf("%s --%s %s: exit %d, stderr %q; want exit 2 and %q", c.CommandPath(), f.Name, v, code, errOut, want)
				}
			}
			for _, v := range []string{b.Min, b.Max} {
				if v == "" {
					continue
				}
				// Checked without running the command (it would call AWS).
				fresh, _, err := newTree(t).Find(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.Flags().Set(f.Name, v); err != nil {
					t.Fatal(err)
				}
				if err := flagcheck.Check(fresh.Flags()); err != nil {
					t.Errorf("%s --%s %s: its own bound refused: %v", c.CommandPath(), f.Name, v, err)
				}
			}
		})
	})
	t.Logf("%d out-of-range values refused with the one shape", n)
	if n < 30 {
		t.Errorf("only %d out-of-range values tried: the bounded flags are not declared with flagcheck.Range", n)
	}
}
