package guard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/protect"
)

// ErrNotConfirmed is wrapped by the usage error of a protected target whose
// name was mistyped or not typed at the prompt (exit 2).
var ErrNotConfirmed = errors.New("not confirmed: nothing was changed")

// confirmation describes a destructive action about to run.
type confirmation struct {
	yes bool // --yes: do it (otherwise a dry run)
	// targets are the protection decisions (protect.Policy.Decide) of
	// everything the action changes or invokes.
	targets []protect.Decision
	// typed are the --confirm values: each must name one of targets.
	typed []string
}

// protection decides each target under this run's policy (protect.Policy.Decide).
func protection(f *factory.Factory, targets ...protect.Target) ([]protect.Decision, error) {
	p, err := f.ProtectPolicy()
	if err != nil {
		return nil, err
	}
	out := make([]protect.Decision, 0, len(targets))
	for _, t := range targets {
		// An endpoint that does not answer decides nothing and changes
		// nothing: say that (exit 124), rather than "protected" (exit 2).
		var te *awsconfig.TimeoutError
		if errors.As(t.TagsErr, &te) {
			return nil, fmt.Errorf("reading the tags of %s %s to decide whether it is protected: %w; nothing was changed", t.Kind, t.Name, te)
		}
		// Nor does an interrupted read (Ctrl-C): it is not a refusal.
		if errors.Is(t.TagsErr, context.Canceled) {
			return nil, fmt.Errorf("reading the tags of %s %s to decide whether it is protected: %w", t.Kind, t.Name, t.TagsErr)
		}
		out = append(out, p.Decide(t))
	}
	return out, nil
}

// confirm is the one confirmation rule of every destructive command, applied
// to the resolved protection decisions of its targets:
//
//   - a --confirm that names none of the targets is a usage error (exit 2),
//     protected or not, dry run or not: nothing is changed;
//   - without --yes it is a dry run (false, nil);
//   - every protected target needs its name typed at a prompt, or given with
//     --confirm; without a terminal a missing one, and a name mistyped or
//     not typed at the prompt, are usage errors (exit 2) naming the flag.
//
// Each decision is noted in the audit record.
func confirm(f *factory.Factory, c confirmation) (bool, error) {
	if err := confirmMatches(c); err != nil {
		return false, err
	}
	typed := map[string]bool{}
	for _, t := range c.typed {
		typed[t] = true
	}
	if len(c.targets) == 0 {
		return false, errors.New("no target to confirm: nothing was changed")
	}
	for _, d := range c.targets {
		if f.Audit != nil {
			f.Audit.Act(audit.ActProtection, d.Name, d)
		}
	}
	if !c.yes {
		return false, nil
	}
	for _, d := range c.targets {
		if !d.Protected || typed[d.Name] {
			continue
		}
		if !f.IOStreams.CanPrompt() {
			return false, factory.UsageErrorf("%s %s is protected (%s): run in a terminal to type its name, or pass --confirm %s; nothing was changed", d.Kind, d.Name, d.Reason, d.Name)
		}
		fmt.Fprintf(f.IOStreams.ErrOut, "%s %s is PROTECTED (%s).\nType its name to continue: ", d.Kind, d.Name, d.Reason)
		line, err := f.Stdin().ReadString('\n')
		if err != nil && line == "" {
			return false, factory.UsageErrorf("%s %s is protected: no name was typed (the prompt closed); type %s, or pass --confirm %s: %w", d.Kind, d.Name, d.Name, d.Name, ErrNotConfirmed)
		}
		if got := strings.TrimSpace(line); got != d.Name {
			return false, factory.UsageErrorf("%s %s is protected: %q was typed, not its name; type %s, or pass --confirm %s: %w", d.Kind, d.Name, got, d.Name, d.Name, ErrNotConfirmed)
		}
		typed[d.Name] = true
	}
	return true, nil
}

// confirmMatches is the first part of confirm, also checked early
// (Decided.CheckTyped): every --confirm value must name one of the targets
// (a usage error otherwise, protected or not).
func confirmMatches(c confirmation) error {
	names := map[string]bool{}
	var all []string
	for _, d := range c.targets {
		if !names[d.Name] {
			all = append(all, d.Name)
		}
		names[d.Name] = true
	}
	for _, t := range c.typed {
		if !names[t] {
			return factory.UsageErrorf("--confirm %q does not match %s: nothing was changed", t, quoteAll(all))
		}
	}
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return "the target " + q[0]
	}
	return "any of the targets " + strings.Join(q, ", ")
}
