// Package wait implements `dynops export wait`.
package wait

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/export"
)

// NewCmdWait returns `dynops export wait ARN`.
func NewCmdWait(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wait EXPORT_ARN",
		Short: "Wait until an export completes (progress on a terminal); exit 1 if it fails",
		Args:  shared.OneExportArn,
		RunE: func(cmd *cobra.Command, args []string) error {
			clients, err := f.AWS(cmd.Context())
			if err != nil {
				return err
			}
			db := clients.DynamoDB()
			e, err := shared.Wait(cmd.Context(), f, db, args[0])
			if perr := shared.PrintExports(f, []export.Export{e}); err == nil {
				err = perr
			}
			return err
		},
	}
	cmdfacts.SetInterrupt(cmd, "the export goes on in AWS; run `dynops export wait ARN` again")
	cmdfacts.ReadOnly(cmd)
	return cmd
}
