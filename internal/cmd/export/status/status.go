// Package status implements `dynops export status`.
package status

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/export"
)

// NewCmdStatus returns `dynops export status ARN`.
func NewCmdStatus(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "status EXPORT_ARN",
		Short:   "Show one export: status, time or window, items, failure",
		Example: `  dynops export status arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user/export/01700000000000-abcd1234`,
		Args:    shared.OneExportArn,
		RunE: func(cmd *cobra.Command, args []string) error {
			clients, err := f.AWS(cmd.Context())
			if err != nil {
				return err
			}
			db := clients.DynamoDB()
			e, err := export.Describe(cmd.Context(), db, args[0])
			if err != nil {
				return err
			}
			return shared.PrintExports(f, []export.Export{e})
		},
	}
	cmdfacts.ReadOnly(cmd)
	return cmd
}
