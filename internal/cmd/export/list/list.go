// Package list implements `dynops export list`.
package list

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/export"
)

// NewCmdList returns `dynops export list`.
func NewCmdList(f *factory.Factory) *cobra.Command {
	var table string
	cmd := &cobra.Command{
		Use:     "list [--table T]",
		Short:   "List exports of a table (or of the account and region), newest first",
		Example: `  dynops export list --table dev-hoge-user`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			clients, err := f.AWS(ctx)
			if err != nil {
				return err
			}
			db := clients.DynamoDB()
			arn := ""
			if table != "" {
				if arn, err = export.TableArn(ctx, db, table); err != nil {
					return err
				}
			}
			es, err := export.List(ctx, db, arn)
			if err != nil {
				return err
			}
			return shared.PrintExports(f, es)
		},
	}
	cmd.Flags().StringVarP(&table, "table", "t", "", "only this table's exports")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}
