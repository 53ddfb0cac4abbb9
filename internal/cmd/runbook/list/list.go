// Package list is `dynops runbook list`.
package list

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// NewCmdList returns `dynops runbook list`.
func NewCmdList(f *factory.Factory, runF func(context.Context) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runbooks, their parameters and steps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context())
			}
			return Run(f)
		},
	}
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}

// Run lists the embedded runbooks.
func Run(f *factory.Factory) error {
	all, err := runbook.LoadAll(runbooks.FS)
	if err != nil {
		return err
	}
	return view.Results(f, func(all []*runbook.Runbook) error { return showList(f, all) }).Show(all)
}

// showList is the human view: one row per runbook, then how to run one.
func showList(f *factory.Factory, all []*runbook.Runbook) error {
	rows := make([][]string, 0, len(all))
	for _, rb := range all {
		var params, steps []string
		for _, p := range rb.Params {
			params = append(params, p.Name)
		}
		for _, s := range rb.Steps {
			id := s.ID
			if s.Destructive {
				id += "*"
			}
			steps = append(steps, id)
		}
		rows = append(rows, []string{rb.Name, rb.Title, strings.Join(params, ","), strings.Join(steps, " ")})
	}
	if err := f.IOStreams.Table([]string{"NAME", "TITLE", "PARAMS", "STEPS (* changes things)"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(f.IOStreams.Out, "\nRun one: dynops runbook run NAME --incident ID --param name=value ...")
	return nil
}
