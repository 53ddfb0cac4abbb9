// Package rollback implements `dynops migrate rollback`.
package rollback

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/migrate/shared"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/migrate"
)

// Options of `dynops migrate rollback`.
type Options struct {
	shared.Flags
	Pointer string
	Value   string
	Yes     bool
	Confirm []string
}

// Report is the --output json document.
type Report struct {
	DryRun bool           `json:"dry_run"`
	Steps  []migrate.Step `json:"steps"`
}

// NewCmdRollback returns `dynops migrate rollback`. runF replaces the run function in tests of flag parsing.
func NewCmdRollback(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "rollback --source TABLE --routes FILE [--yes]",
		Short: "Point the application back at the source (while it exists) and lift the fence",
		Long: `Rollback undoes a cutover while the source table still exists: it removes the
write fence from the source (read back), then sets the pointer back to the
value it had before the cutover (default single), read back.

Writes the application made to the destinations after the cutover are not in
the source: compare with ` + "`dynops migrate verify`" + ` and copy them back if needed.
Without --yes it prints the steps; prod tables need --confirm NAME.`,
		Example: `  dynops migrate rollback --source dev-aiagent-single --routes routes.yaml --yes`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddFlags(cmd, &opts.Flags)
	fl := cmd.Flags()
	fl.StringVar(&opts.Pointer, "pointer", "", "SSM parameter the application reads (default: the cutover's)")
	fl.StringVar(&opts.Value, "value", "", "the pointer's value after the rollback (default: its value before the cutover, else single)")
	fl.BoolVar(&opts.Yes, "yes", false, "roll back (without it: print the steps, change nothing)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the source table's name, if it is protected")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "the rollback stopped between steps (the audit log lists what was done): the source may still be fenced or the pointer still on the destinations; run the same `dynops migrate rollback` again")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "source")
	return cmd
}

// Run rolls back, or prints the steps in a dry run.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	// A rollback works without the migration's state (lost, another machine):
	// it then uses the default pointer and value.
	l, err := shared.Load(&opts.Flags, true)
	if err != nil {
		return err
	}
	ro := migrate.RollbackOptions{Source: opts.Source, Pointer: opts.Pointer, Value: opts.Value, Act: f.Audit.Act, Now: f.Now}
	pointer, value := migrate.RollbackTarget(l.State, ro)
	g, err := shared.Confirm(ctx, f, opts.Source, pointer, opts.Yes, opts.Confirm)
	if err != nil {
		return err
	}
	rep := Report{DryRun: g.DryRun()}
	if rep.DryRun {
		rep.Steps = migrate.RollbackSteps(opts.Source, pointer, value)
		f.Audit.Act(audit.ActRollback, opts.Source, rep.Steps)
	} else {
		c, err := shared.Clients(ctx, f)
		if err != nil {
			return err
		}
		rep.Steps, err = migrate.Rollback(ctx, c, ro, l.State)
		if err != nil {
			return err
		}
	}
	return show(f, g, rep, opts.Source, value)
}

// show shows the rollback's steps: a table, then the dry-run notice or
// where the pointer and the writes are now; or the JSON document.
func show(f *factory.Factory, g *guard.Confirmed, rep Report, source, value string) error {
	return view.Results(f, func(rep Report) error {
		var rows [][]string
		for _, s := range rep.Steps {
			rows = append(rows, []string{s.Name, s.Status, s.Detail})
		}
		if err := f.IOStreams.Table([]string{"STEP", "STATUS", "DETAIL"}, rows); err != nil {
			return err
		}
		if rep.DryRun {
			g.PrintDryRun("roll back")
		} else {
			fmt.Fprintf(f.IOStreams.Out, "\nRolled back: the application's pointer says %q and %s takes writes again.\n", value, source)
		}
		return nil
	}).Show(rep)
}
