// Package verify is `dynops audit verify`: check the hash chain of the audit
// log and name the first line where it breaks.
package verify

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
)

// Options of `dynops audit verify` (none but the global --audit-log).
type Options struct{}

// NewCmdVerify returns `dynops audit verify`. runF replaces the run function in tests of flag parsing.
func NewCmdVerify(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the audit log's hash chain; name the first edited, deleted or inserted line (exit 1)",
		Long: `Every audit record carries in "prev" the SHA-256 of the line before it in the
same file. Verify reads the log (--audit-log) and checks every link: an edited,
deleted or inserted line breaks the chain at the line after it, which is named
(exit 1). Records written before dynops chained them are counted, not refused.
The chain cannot show an edit of the last line, nor a whole file rewritten with
a fresh chain by whoever holds it: the central copy (--audit-log-group) and
CloudTrail data events are the records the operator cannot rewrite
(docs/audit.md).`,
		Example: `  dynops audit verify
  dynops audit verify --audit-log /var/log/dynops/audit.jsonl -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}

// Run checks the chain; exit 1 when it breaks.
func Run(_ context.Context, f *factory.Factory, _ *Options) error {
	rep, err := audit.VerifyChain(f.Audit.Path())
	if err != nil {
		return fmt.Errorf("%w (the log is --audit-log, DYNOPS_AUDIT_LOG or $XDG_STATE_HOME/dynops/audit.jsonl)", err)
	}
	if err := view.Results(f, func(rep audit.ChainReport) error { return showChain(f, rep) }).Show(rep); err != nil {
		return err
	}
	if !rep.OK() {
		return factory.ExitError{Code: exitcode.Failure}
	}
	return nil
}

// showChain is the human view: one line, whether the chain holds.
func showChain(f *factory.Factory, rep audit.ChainReport) error {
	if rep.OK() {
		fmt.Fprintf(f.IOStreams.Out, "%s: the chain holds (%d records chained, %d written before the chain)\n", rep.Path, rep.Chained, rep.Unchained)
		return nil
	}
	fmt.Fprintf(f.IOStreams.Out, "%s: the chain breaks at line %d: %s\n", rep.Path, rep.Broken, rep.Reason)
	return nil
}
