// Package export groups the `dynops export` verbs: exports to S3
// (DDB-EXP-01), their verification, and import into a new table (DDB-DR-01).
package export

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/export/apply"
	"github.com/dynops/dynops/internal/cmd/export/full"
	importcmd "github.com/dynops/dynops/internal/cmd/export/import"
	"github.com/dynops/dynops/internal/cmd/export/incremental"
	"github.com/dynops/dynops/internal/cmd/export/list"
	"github.com/dynops/dynops/internal/cmd/export/revert"
	"github.com/dynops/dynops/internal/cmd/export/status"
	"github.com/dynops/dynops/internal/cmd/export/verify"
	"github.com/dynops/dynops/internal/cmd/export/wait"
	"github.com/dynops/dynops/internal/cmd/factory"
)

// NewCmdExport returns `dynops export` and its verbs.
func NewCmdExport(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export <command>",
		Short: "Export tables to S3, verify exports, import them into new tables",
		Long: `Export tables to S3 from PITR (no read capacity, DDB-EXP-01): full exports,
incremental windows (15 minutes to 24 hours) and the gap-free checkpointed
series the modules/dynamodb-export scheduler runs; verify an export against
its manifests; import one into a new table, e.g. in another region (DDB-DR-01).
See runbooks/export-and-cross-region-restore.md.`,
	}
	cmd.AddCommand(
		full.NewCmdFull(f, nil),
		incremental.NewCmdIncremental(f, nil),
		list.NewCmdList(f),
		status.NewCmdStatus(f),
		wait.NewCmdWait(f),
		verify.NewCmdVerify(f, nil),
		importcmd.NewCmdImport(f, nil),
		apply.NewCmdApply(f, nil),
		revert.NewCmdRevert(f, nil),
	)
	return cmd
}
