// Package cmdfacts holds what root needs to know about a command, declared on
// the command itself as cobra annotations (as gh's cmdutil.DisableAuthCheck
// does): whether it changes anything, what a Ctrl-C leaves behind and how to
// continue or undo it, its default AWS timeout, which flags name its audit
// targets, and whether its run is audited at all.
//
// A command that changes anything declares all of them in its constructor:
//
//	cmdfacts.Writes(cmd)
//	cmdfacts.SetInterrupt(cmd, "items written so far stay written; run the same repair again")
//	cmdfacts.SetTimeout(cmd, time.Minute)
//	cmdfacts.SetTargets(cmd, "from", "to")
//
// A command that only reads declares cmdfacts.ReadOnly(cmd) (its interrupt
// state is then "nothing was changed") and the targets it reads.
// TestEveryCommandDeclaresItsFacts in internal/cmd/root walks the tree.
package cmdfacts

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Annotation keys; read them through the functions below.
const (
	keyChanges   = "dynops.changes"
	keyInterrupt = "dynops.interrupt"
	keyTimeout   = "dynops.timeout"
	keyTargets   = "dynops.targets"
	keyAudit     = "audit"
)

// NothingChanged is the interrupt state of a command that only reads.
const NothingChanged = "nothing was changed"

func set(cmd *cobra.Command, key, value string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[key] = value
}

func get(cmd *cobra.Command, key string) (string, bool) {
	v, ok := cmd.Annotations[key]
	return v, ok
}

// Writes declares that cmd changes something (AWS resources, files it was not
// asked to print): it must then declare its interrupt state, timeout and
// audit targets too.
func Writes(cmd *cobra.Command) { set(cmd, keyChanges, "true") }

// ReadOnly declares that cmd changes nothing; a Ctrl-C leaves
// NothingChanged unless SetInterrupt says more.
func ReadOnly(cmd *cobra.Command) {
	set(cmd, keyChanges, "false")
	if _, ok := get(cmd, keyInterrupt); !ok {
		set(cmd, keyInterrupt, NothingChanged)
	}
}

// Changes reports whether cmd declared that it changes something, and
// whether it declared either way.
func Changes(cmd *cobra.Command) (changes, declared bool) {
	v, ok := get(cmd, keyChanges)
	return v == "true", ok
}

// SetInterrupt declares in what state a Ctrl-C leaves things and how to
// continue or undo (e.g. "the source stays fenced; undo with `dynops migrate
// rollback`").
func SetInterrupt(cmd *cobra.Command, state string) { set(cmd, keyInterrupt, state) }

// Interrupt is cmd's declared interrupt state ("" when undeclared).
func Interrupt(cmd *cobra.Command) string {
	v, _ := get(cmd, keyInterrupt)
	return v
}

// SetTimeout declares the bound on each AWS call of cmd (and of its
// subcommands that declare none) when --timeout is not given.
func SetTimeout(cmd *cobra.Command, d time.Duration) { set(cmd, keyTimeout, d.String()) }

// Timeout is the default AWS timeout declared on cmd or its nearest
// ancestor, and whether one was found.
func Timeout(cmd *cobra.Command) (time.Duration, bool) {
	for c := cmd; c != nil; c = c.Parent() {
		if v, ok := get(c, keyTimeout); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				panic(fmt.Sprintf("cmdfacts: %s: timeout annotation %q: %v", c.CommandPath(), v, err))
			}
			return d, true
		}
	}
	return 0, false
}

// OwnTimeout reports whether cmd itself declares its timeout.
func OwnTimeout(cmd *cobra.Command) bool {
	_, ok := get(cmd, keyTimeout)
	return ok
}

// SetTargets declares the flags whose values are what cmd acts on, in the
// order the audit record lists them; none is a valid declaration (e.g. a
// runbook run, whose steps record their own targets).
func SetTargets(cmd *cobra.Command, flags ...string) {
	set(cmd, keyTargets, strings.Join(flags, ","))
}

// Targets is cmd's declared target flags, and whether it declared them.
func Targets(cmd *cobra.Command) ([]string, bool) {
	v, ok := get(cmd, keyTargets)
	if !ok || v == "" {
		return nil, ok
	}
	return strings.Split(v, ","), true
}

// SkipAudit declares that running cmd leaves no audit record (help, version,
// reading the audit log itself).
func SkipAudit(cmd *cobra.Command) { set(cmd, keyAudit, "skip") }

// AuditSkipped reports whether cmd's run leaves no audit record.
func AuditSkipped(cmd *cobra.Command) bool {
	v, _ := get(cmd, keyAudit)
	return v == "skip"
}

// Missing lists, as the lines of Go to add to cmd's constructor, the facts a
// runnable command has not declared (nil when it is complete). A command that
// only groups others declares nothing.
func Missing(cmd *cobra.Command) []string {
	if !cmd.Runnable() || cmd.HasSubCommands() {
		return nil
	}
	changes, declared := Changes(cmd)
	if !declared {
		return []string{"cmdfacts.ReadOnly(cmd) if it changes nothing, or cmdfacts.Writes(cmd) and the facts of a writing command"}
	}
	var miss []string
	if Interrupt(cmd) == "" {
		miss = append(miss, `cmdfacts.SetInterrupt(cmd, "what a Ctrl-C leaves behind; how to continue or undo it")`)
	}
	if !changes {
		return miss
	}
	if !OwnTimeout(cmd) {
		miss = append(miss, "cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout) (or the bound on one AWS call that suits it)")
	}
	targets, ok := Targets(cmd)
	if !ok {
		miss = append(miss, `cmdfacts.SetTargets(cmd, "table") (the flags naming what it changes; none is allowed)`)
	}
	for _, t := range targets {
		if cmd.Flags().Lookup(t) == nil {
			miss = append(miss, fmt.Sprintf("a --%s flag, or drop %q from cmdfacts.SetTargets", t, t))
		}
	}
	return miss
}
