// Package guard is the one sequence every destructive command goes through
// before it changes anything: the protection decision of its targets, the
// confirmation (--yes, and for a protected target its name typed or given
// with --confirm), and the start of the run's audit record. The types make
// the order the only one possible:
//
//	d, err := guard.Decide(f, targets...)     // Decided: each target protected or not, and why
//	c, err := d.Confirm(opts.Yes, opts.Confirm) // Confirmed: a dry run, or go ahead
//	if c.DryRun() { ...; c.PrintDryRun("restore"); return nil }
//	rec, err := c.StartAudit(ctx, plan)        // the `started` record, before the first change
//
// A command that checks its --confirm values before its first read calls
// d.CheckTyped(opts.Confirm) first. A dry run's plan opens with one header
// (DryRunHeader) and ends with one notice (DryRunNotice). The factory has no
// protection or confirmation of its own: this package is the only way to
// them (TestProtectionAndConfirmationOnlyThroughTheGuard).
package guard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/protect"
)

// Decided holds the protection decision of each target of a run.
type Decided struct {
	f         *factory.Factory
	decisions []protect.Decision
}

// Decide decides each target under the run's protection policy
// (factory.ProtectPolicy): tags that could not be read leave a target
// protected; an endpoint that does not answer, or a Ctrl-C, decides nothing.
// It is the one way a command learns whether a target is protected.
func Decide(f *factory.Factory, targets ...protect.Target) (*Decided, error) {
	ds, err := protection(f, targets...)
	if err != nil {
		return nil, err
	}
	return &Decided{f: f, decisions: ds}, nil
}

// Decisions are the targets' decisions, in the order they were given.
func (d *Decided) Decisions() []protect.Decision { return d.decisions }

// CheckTyped is Confirm's first check, for commands that make it before
// their first read (pitr repair, dr drill, item writes): every --confirm
// value must name one of the targets, a usage error (exit 2) otherwise,
// protected or not, dry run or not.
func (d *Decided) CheckTyped(typed []string) error {
	return confirmMatches(confirmation{targets: d.decisions, typed: typed})
}

// Confirmed is a run that is either a dry run or confirmed to go ahead.
type Confirmed struct {
	d       *Decided
	goAhead bool
}

// Confirm applies the one confirmation rule (confirm): without yes a
// dry run; with it every protected target needs its name in typed or typed
// at a prompt. A Decided without targets (nothing that exists to protect)
// goes ahead with yes; a --confirm value must still name a target.
func (d *Decided) Confirm(yes bool, typed []string) (*Confirmed, error) {
	c := confirmation{yes: yes, targets: d.decisions, typed: typed}
	if len(d.decisions) == 0 {
		if err := confirmMatches(c); err != nil {
			return nil, err
		}
		return &Confirmed{d: d, goAhead: yes}, nil
	}
	ok, err := confirm(d.f, c)
	if err != nil {
		return nil, err
	}
	return &Confirmed{d: d, goAhead: ok}, nil
}

// DryRun reports whether nothing may be changed (no --yes).
func (c *Confirmed) DryRun() bool { return !c.goAhead }

// Decisions are the targets' decisions.
func (c *Confirmed) Decisions() []protect.Decision { return c.d.decisions }

// ErrDryRun is returned by StartAudit on a dry run: nothing may start.
var ErrDryRun = errors.New("a dry run changes nothing: pass --yes")

// StartAudit writes the run's `started` record with plan, before the first
// change; when it cannot be written nothing may go ahead (audit.ErrNotAudited).
func (c *Confirmed) StartAudit(ctx context.Context, plan audit.Plan) (*audit.Recorder, error) {
	if !c.goAhead {
		return nil, ErrDryRun
	}
	if err := c.d.requireCentralCopy(ctx); err != nil {
		return nil, err
	}
	rec := c.d.f.Audit
	if err := rec.Start(ctx, plan); err != nil {
		return nil, err
	}
	return rec, nil
}

// requireCentralCopy: a protected target is written only while the audit
// records also go to the central copy (--audit-log-group or
// DYNOPS_AUDIT_LOG_GROUP: the operator's own local file is theirs to edit),
// or, by the break-glass role alone, with --without-audit-log-group REASON.
func (d *Decided) requireCentralCopy(ctx context.Context) error {
	fl := d.f.Flags
	if fl == nil || fl.AuditLogGroup != "" {
		return nil
	}
	var protected []string
	for _, dec := range d.decisions {
		if dec.Protected {
			protected = append(protected, fmt.Sprintf("%s %s", dec.Kind, dec.Name))
		}
	}
	if len(protected) == 0 {
		return nil
	}
	if strings.TrimSpace(fl.WithoutAuditLogGroup) == "" {
		return factory.UsageErrorf("writing protected %s needs the central audit copy, and none is set: pass --audit-log-group GROUP or set DYNOPS_AUDIT_LOG_GROUP (modules/dynamodb-access audit_log_group, output audit_log_group_name, which the operator role may write); nothing was changed; without it only the break-glass role may write it, with --without-audit-log-group REASON",
			strings.Join(protected, ", "))
	}
	return d.AllowException(ctx, "--without-audit-log-group")
}

// dryRunWould opens every dry run's plan (DryRunHeader).
const dryRunWould = "DRY RUN: with --yes dynops would"

// DryRunHeader is the one line that opens a dry run's plan, in one casing:
// "DRY RUN: with --yes dynops would " and what (e.g. "revert the window
// ..."); with what empty the plan's steps follow ("... would:"). A command
// does not write its own: TestDryRunWordingOnlyInTheGuard.
func DryRunHeader(what string) string {
	if what == "" {
		return dryRunWould + ":"
	}
	return dryRunWould + " " + what
}

// DryRunNotice is the one line that ends every dry run: nothing was changed,
// --yes does it, and for each protected target that its name must be typed
// when asked or given with --confirm.
func (c *Confirmed) DryRunNotice(verb string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Dry run: nothing was changed. Add --yes to %s.", verb)
	for _, d := range c.d.decisions {
		if d.Protected {
			fmt.Fprintf(&b, " %s %s is protected (%s): with --yes, type its name when asked or add --confirm %s.", d.Kind, d.Name, d.Reason, d.Name)
		}
	}
	return b.String()
}

// PrintDryRun prints DryRunNotice on stdout, after a blank line (not with
// --output json, whose document is the dry run).
func (c *Confirmed) PrintDryRun(verb string) {
	view.Printf(c.d.f, c.d.f.IOStreams.Out)("\n%s\n", c.DryRunNotice(verb))
}

// AllowException decides whether an operator's exception (a flag whose
// reason accepts what dynops would refuse, e.g. --unverified-exports) may be
// taken on these targets: on an unprotected target yes; on a protected one
// only as the break-glass role (protect.IsBreakGlass), read from
// sts:GetCallerIdentity (unreadable: refused). A refusal is a usage error
// (exit 2) naming the flag, the target and the fix.
func (d *Decided) AllowException(ctx context.Context, flag string) error {
	var protected []string
	for _, dec := range d.decisions {
		if dec.Protected {
			protected = append(protected, fmt.Sprintf("%s %s (%s)", dec.Kind, dec.Name, dec.Reason))
		}
	}
	if len(protected) == 0 {
		return nil
	}
	caller, err := d.f.CallerArn(ctx)
	if err == nil && protect.IsBreakGlass(caller) {
		return nil
	}
	who := caller
	if err != nil {
		who = "unknown (" + err.Error() + ")"
	}
	return factory.UsageErrorf("%s is refused on protected %s: only the %s role may take this exception there, and the caller is %s; nothing was changed; run it as the break-glass role (with MFA), or drop %s",
		flag, strings.Join(protected, ", "), protect.BreakGlassRole, who, flag)
}
