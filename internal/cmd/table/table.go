// Package table is `dynops table`: operations on the items of tables.
package table

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/table/adopt"
	"github.com/dynops/dynops/internal/cmd/table/diff"
)

// NewCmdTable returns `dynops table` and its subcommands.
func NewCmdTable(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table <command>",
		Short: "Work with tables: diff their items, adopt an existing table into Terraform",
	}
	cmd.AddCommand(diff.NewCmdDiff(f, nil))
	cmd.AddCommand(adopt.NewCmdAdopt(f, nil))
	return cmd
}
