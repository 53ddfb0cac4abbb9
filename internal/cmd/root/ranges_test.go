package root

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/cmd/flagcheck"
)

// numeric reports whether a flag takes a number or a duration.
func numeric(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "duration":
		return true
	}
	return false
}

// unranged lists the number and duration flags of the tree (local and
// persistent, each once) that declare no range with flagcheck.Range.
func unranged(root *cobra.Command) []string {
	seen := map[*pflag.Flag]bool{}
	var out []string
	walk(root, func(c *cobra.Command) {
		visit := func(f *pflag.Flag) {
			if seen[f] || !numeric(f) {
				return
			}
			seen[f] = true
			if flagcheck.BoundOf(f) == (flagcheck.Bound{}) {
				out = append(out, fmt.Sprintf("%s --%s (%s)", c.CommandPath(), f.Name, f.Value.Type()))
			}
		}
		c.LocalFlags().VisitAll(visit)
		c.PersistentFlags().VisitAll(visit)
	})
	sort.Strings(out)
	return out
}

// TestEveryNumberFlagDeclaresItsRange walks the whole command tree: every
// int, float and duration flag declares its range where it is registered
// (flagcheck.Range), so root checks it before the command runs, --help shows
// it, and no command checks a range by hand.
func TestEveryNumberFlagDeclaresItsRange(t *testing.T) {
	if missing := unranged(newTree(t)); len(missing) > 0 {
		t.Errorf("number and duration flags without a declared range: add flagcheck.Range(cmd.Flags(), NAME, MIN, MAX, WHY) where each is registered:\n\t%s", strings.Join(missing, "\n\t"))
	}
}

// TestNoRangeCheckedByHand reads the command sources: a range refused by hand
// (`UsageErrorf("--workers %d: use 1 to 64", ...)`) drifts from --help and from
// every other refusal's wording; flagcheck.Range declares it once.
func TestNoRangeCheckedByHand(t *testing.T) {
	byHand := regexp.MustCompile(`UsageErrorf\("--[a-z-]+ %d`)
	for _, at := range sourcesMatching(t, byHand, "") {
		t.Errorf("%s checks a flag's range by hand: declare it with flagcheck.Range where the flag is registered", at)
	}
}

// sourcesMatching reads the command sources under internal/cmd (tests and
// the folder except left out) and returns "file:line" of each match of re.
func sourcesMatching(t *testing.T, re *regexp.Regexp, except string) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../*/*.go", "../*/*/*.go", "../*/*/*/*.go"} {
		more, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d command sources under internal/cmd: the walk is broken", len(files))
	}
	var at []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || (except != "" && strings.HasPrefix(f, "../"+except+"/")) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range re.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			at = append(at, fmt.Sprintf("%s:%d", strings.TrimPrefix(f, "../"), line))
		}
	}
	return at
}

// TestResultsPrintedThroughTheFactory reads the command sources: a command's
// -o json result goes through f.PrintResult, which adds the run's throttles
// per reason; a command that prints through IOStreams.PrintJSON itself would
// drop them.
func TestResultsPrintedThroughTheFactory(t *testing.T) {
	direct := regexp.MustCompile(`IOStreams\.PrintJSON\(`)
	for _, at := range sourcesMatching(t, direct, "factory") {
		t.Errorf("%s prints its JSON result past the factory: use f.PrintResult", at)
	}
}
