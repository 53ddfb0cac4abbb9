package root

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
)

// budgetFlagsByHand lists the --max-read-units and --max-write-units flags
// of the tree not registered by budget.Budgets.AddFlags.
func budgetFlagsByHand(root *cobra.Command) []string {
	var out []string
	walk(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != capacity.Read.Flag() && f.Name != capacity.Write.Flag() {
				return
			}
			if _, ok := f.Annotations[budget.Annotation]; !ok {
				out = append(out, fmt.Sprintf("%s --%s", c.CommandPath(), f.Name))
			}
		})
	})
	sort.Strings(out)
	return out
}

// TestBudgetFlagsOnlyThroughBudgets walks the whole command tree: a bulk
// command takes its capacity budget through budget.Budgets (AddFlags, then
// Resolve or Tables), the one way that says the budgets before the run and
// records them; a budget flag registered by hand would skip all of it.
func TestBudgetFlagsOnlyThroughBudgets(t *testing.T) {
	tree := newTree(t)
	if byHand := budgetFlagsByHand(tree); len(byHand) > 0 {
		t.Errorf("budget flags registered by hand: embed budget.Budgets in the options and call opts.Budgets.AddFlags(fl, READS, WRITES):\n\t%s", strings.Join(byHand, "\n\t"))
	}
	n := 0
	walk(tree, func(c *cobra.Command) {
		if c.LocalFlags().Lookup(capacity.Read.Flag()) != nil || c.LocalFlags().Lookup(capacity.Write.Flag()) != nil {
			n++
		}
	})
	if n < 7 {
		t.Errorf("found %d commands with a budget flag, expected at least 7 (migrate backfill, catch-up, verify; export apply, revert; table diff; pitr repair): the walk is broken", n)
	}
}

// TestBudgetFlagsByHandFound: the walk finds a flag registered by hand and
// passes one registered by budget.Budgets.
func TestBudgetFlagsByHandFound(t *testing.T) {
	root := &cobra.Command{Use: "dynops"}
	hand := &cobra.Command{Use: "hand", Run: func(*cobra.Command, []string) {}}
	var units float64
	hand.Flags().Float64Var(&units, "max-write-units", 0, "by hand")
	helped := &cobra.Command{Use: "helped", Run: func(*cobra.Command, []string) {}}
	var b budget.Budgets
	b.AddFlags(helped.Flags(), "the source", "the destination")
	root.AddCommand(hand, helped)
	if got, want := budgetFlagsByHand(root), []string{"dynops hand --max-write-units"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("budgetFlagsByHand = %q, want %q", got, want)
	}
}

// TestBudgetsResolvedOnlyThroughBudgets reads the command sources: a budget
// resolved with capacity.Resolve itself is not kept for the run's status,
// audit and report (budget.Budgets.Resolve keeps it).
func TestBudgetsResolvedOnlyThroughBudgets(t *testing.T) {
	direct := regexp.MustCompile(`capacity\.Resolve\(`)
	for _, at := range sourcesMatching(t, direct, "budget") {
		t.Errorf("%s resolves a budget past budget.Budgets: use opts.Budgets.Resolve (or Tables)", at)
	}
}
