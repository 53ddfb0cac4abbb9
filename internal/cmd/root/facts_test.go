package root

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

func newTree(t *testing.T) *cobra.Command {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	return NewCmdRoot(factory.New(ios), "1.2.3")
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walk(s, fn)
	}
}

// missingFacts is, per runnable command of the tree, what it fails to declare.
func missingFacts(root *cobra.Command) []string {
	var problems []string
	walk(root, func(c *cobra.Command) {
		if c == root || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if miss := cmdfacts.Missing(c); len(miss) > 0 {
			problems = append(problems, fmt.Sprintf("%s: add to its constructor (before `return cmd`):\n\t%s",
				c.CommandPath(), strings.Join(miss, "\n\t")))
		}
	})
	return problems
}

// TestEveryCommandDeclaresItsFacts walks the whole command tree: every
// runnable command says whether it changes anything, and one that does says
// what a Ctrl-C leaves behind, its default timeout and its audit target
// flags (see docs/architecture.md "Adding a command").
func TestEveryCommandDeclaresItsFacts(t *testing.T) {
	root := newTree(t)
	if problems := missingFacts(root); len(problems) > 0 {
		t.Errorf("commands without their facts (package internal/cmd/cmdfacts):\n%s", strings.Join(problems, "\n"))
	}
	// The writing commands named by issue 30, and every command with --yes.
	writes := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		if changes, _ := cmdfacts.Changes(c); changes {
			writes[c.CommandPath()] = true
		} else if c.Flags().Lookup("yes") != nil {
			t.Errorf("%s takes --yes but does not declare cmdfacts.Writes(cmd)", c.CommandPath())
		}
	})
	for _, path := range []string{"export apply", "export revert", "export import", "export full", "export incremental", "migrate backfill", "migrate catch-up",
		"migrate cutover", "migrate rollback", "runbook run", "pitr restore", "pitr repair", "dlq redrive", "dlq move", "dr failover", "dr failback", "dr drill"} {
		if !writes["dynops "+path] {
			t.Errorf("dynops %s changes things but does not declare cmdfacts.Writes", path)
		}
	}
}

// TestFactsCheckFailsWithoutEachFact removes each fact from each writing
// command in turn: the tree walk must name the command and what to add.
func TestFactsCheckFailsWithoutEachFact(t *testing.T) {
	keys := map[string]string{
		"dynops.changes":   "cmdfacts.ReadOnly(cmd) if it changes nothing",
		"dynops.interrupt": "cmdfacts.SetInterrupt(cmd,",
		"dynops.timeout":   "cmdfacts.SetTimeout(cmd,",
		"dynops.targets":   "cmdfacts.SetTargets(cmd,",
	}
	n := 0
	walk(newTree(t), func(c *cobra.Command) {
		if changes, _ := cmdfacts.Changes(c); !changes {
			return
		}
		for key, want := range keys {
			n++
			root := newTree(t)
			victim, _, err := root.Find(strings.Fields(c.CommandPath())[1:])
			if err != nil {
				t.Fatal(err)
			}
			delete(victim.Annotations, key)
			problems := strings.Join(missingFacts(root), "\n")
			if !strings.Contains(problems, c.CommandPath()+":") || !strings.Contains(problems, want) {
				t.Errorf("without %s on %s the check says %q, want it to name the command and %q", key, c.CommandPath(), problems, want)
			}
		}
	})
	if n < 16*4 {
		t.Errorf("only %d removals tried: fewer writing commands than issue 30 names", n)
	}
	// A target flag the command does not have is caught too.
	root := newTree(t)
	cutover, _, _ := root.Find([]string{"migrate", "cutover"})
	cmdfacts.SetTargets(cutover, "source", "no-such-flag")
	if p := strings.Join(missingFacts(root), "\n"); !strings.Contains(p, "--no-such-flag") {
		t.Errorf("an undeclared target flag is not caught: %q", p)
	}
}

// TestInterruptKeepsTheErrorsGuidance: the guidance an error wraps around
// the cancellation (cutover's "stays fenced ... rollback") reaches the user,
// and the SDK's chain does not.
func TestInterruptKeepsTheErrorsGuidance(t *testing.T) {
	root := newTree(t)
	cutover, _, _ := root.Find([]string{"migrate", "cutover"})
	cases := []struct {
		err           error
		want, notWant []string
	}{
		{fmt.Errorf("cutover stopped at %s: %w. %s stays fenced and the pointer %s is unchanged; fix the cause and run cutover again, or undo with `dynops migrate rollback --source %s --routes %s --yes`",
			"drain", fmt.Errorf("reading shard s1: operation error DynamoDB Streams: GetRecords, https response error StatusCode: 0, RequestID: , canceled, %w", context.Canceled), "dev-a-single", "/p", "dev-a-single", "r.yaml"),
			[]string{"stopped while cutover stopped at drain: reading shard s1; dev-a-single stays fenced", "dynops migrate rollback --source dev-a-single --routes r.yaml --yes", "source stays FENCED"},
			[]string{"context canceled", "operation error", "StatusCode"}},
		{fmt.Errorf("scanning T segment 1/4: operation error DynamoDB: Scan, https response error: %w", context.Canceled),
			[]string{"stopped while scanning T segment 1/4; once the fence"}, []string{"context canceled", "operation error"}},
		{context.Canceled, []string{"stopped while working; once the fence"}, []string{"context canceled"}},
		{errors.Join(errors.New("draining"), context.Canceled), []string{"stopped while draining; once the fence"}, []string{"context canceled"}},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ios, _, _, errOut := iostreams.Test()
		code := report(ctx, factory.New(ios), cutover, nil, tc.err)
		got := errOut.String()
		if code != 130 || strings.Count(got, "\n") != 1 {
			t.Errorf("exit %d, want 130 and one line: %q", code, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%q shows %q", got, w)
			}
		}
	}
}

// TestUndeclaredInterruptClaimsNothing: a command without an interrupt
// state does not say nothing is left half-done.
func TestUndeclaredInterruptClaimsNothing(t *testing.T) {
	c := &cobra.Command{Use: "x"}
	if s := stateAfterInterrupt(c); strings.Contains(s, "nothing") || !strings.Contains(s, "audit log") {
		t.Errorf("state %q", s)
	}
}
