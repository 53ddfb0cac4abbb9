// Package pitr is `dynops pitr`: point-in-time recovery of a table into a
// new one, and repair of the original from it.
package pitr

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/pitr/repair"
	"github.com/dynops/dynops/internal/cmd/pitr/restore"
	"github.com/dynops/dynops/internal/cmd/pitr/status"
	"github.com/dynops/dynops/internal/cmd/pitr/verify"
)

// NewCmdPitr returns `dynops pitr` and its subcommands.
func NewCmdPitr(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pitr <command>",
		Short: "Point-in-time recovery: status, restore to a new table, repair the original",
		Long: `Point-in-time recovery (DDB-PITR-01/02). A restore always creates a NEW table;
the usual drill is: pitr status, pitr restore, table diff, then either cut over
to the restored table or pitr repair the original from it (scoped to the
damage window) and pitr verify the repair.
See runbooks/pitr-restore.md.`,
	}
	cmd.AddCommand(status.NewCmdStatus(f, nil))
	cmd.AddCommand(restore.NewCmdRestore(f, nil))
	cmd.AddCommand(repair.NewCmdRepair(f, nil))
	cmd.AddCommand(verify.NewCmdVerify(f, nil))
	return cmd
}
