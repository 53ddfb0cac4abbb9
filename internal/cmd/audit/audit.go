// Package audit is `dynops audit`: read the audit trail back, as a list of
// runs or as an incident timeline.
package audit

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/audit/log"
	"github.com/dynops/dynops/internal/cmd/audit/timeline"
	"github.com/dynops/dynops/internal/cmd/audit/verify"
	"github.com/dynops/dynops/internal/cmd/factory"
)

// NewCmdAudit returns `dynops audit` and its subcommands.
func NewCmdAudit(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit <command>",
		Short: "Read the audit trail: runs, and an incident's timeline",
		Long: `Every dynops run writes two records to the audit log (--audit-log): "started"
before its first write and "finished" when it ends, with the same run id. A run
with "started" and no "finished" was interrupted (killed, crashed) and may have
written before it stopped: it is listed as INTERRUPTED. Each record carries the
SHA-256 of the line before it: ` + "`dynops audit verify`" + ` names the first line
where that chain breaks.`,
	}
	cmd.AddCommand(log.NewCmdLog(f, nil))
	cmd.AddCommand(timeline.NewCmdTimeline(f, nil))
	cmd.AddCommand(verify.NewCmdVerify(f, nil))
	return cmd
}
