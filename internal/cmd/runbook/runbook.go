// Package runbook is `dynops runbook`: the on-call runbooks, embedded in the
// binary, listed, shown and run step by step.
package runbook

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/runbook/approve"
	"github.com/dynops/dynops/internal/cmd/runbook/list"
	"github.com/dynops/dynops/internal/cmd/runbook/reject"
	"github.com/dynops/dynops/internal/cmd/runbook/run"
	"github.com/dynops/dynops/internal/cmd/runbook/show"
	"github.com/dynops/dynops/internal/cmd/runbook/status"
)

// NewCmdRunbook returns `dynops runbook` and its subcommands.
func NewCmdRunbook(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runbook <command>",
		Short: "On-call runbooks: list, show and run them step by step",
		Long: `The runbooks of runbooks/ are embedded in dynops. Each is markdown a person
reads, with machine-readable steps (fenced dynops blocks, see runbooks/README.md).
"dynops runbook run NAME" asks for the parameters, runs each step through dynops,
stops before each destructive step unless --yes, carries outputs forward
(restored table names, keys files, export ARNs), writes every step to the
incident's audit timeline and resumes after an interruption.`,
	}
	cmd.AddCommand(list.NewCmdList(f, nil))
	cmd.AddCommand(show.NewCmdShow(f, nil))
	cmd.AddCommand(run.NewCmdRun(f, nil))
	cmd.AddCommand(status.NewCmdStatus(f, nil))
	cmd.AddCommand(approve.NewCmdApprove(f, nil))
	cmd.AddCommand(reject.NewCmdReject(f, nil))
	return cmd
}
