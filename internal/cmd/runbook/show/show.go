// Package show is `dynops runbook show`.
package show

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// NewCmdShow returns `dynops runbook show NAME`.
func NewCmdShow(f *factory.Factory, runF func(context.Context, string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a runbook (markdown; -o json: its parameters and steps)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), args[0])
			}
			return Run(f, args[0])
		},
	}
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}

// Run prints the runbook.
func Run(f *factory.Factory, name string) error {
	rb, err := runbook.Find(runbooks.FS, name)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	return view.Results(f, func(rb *runbook.Runbook) error {
		_, err := fmt.Fprint(f.IOStreams.Out, rb.Markdown)
		return err
	}).Show(rb)
}
