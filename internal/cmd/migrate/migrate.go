// Package migrate is `dynops migrate`: single-table to multi-table migration.
package migrate

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/migrate/backfill"
	"github.com/dynops/dynops/internal/cmd/migrate/catchup"
	"github.com/dynops/dynops/internal/cmd/migrate/cutover"
	"github.com/dynops/dynops/internal/cmd/migrate/plan"
	"github.com/dynops/dynops/internal/cmd/migrate/rollback"
	"github.com/dynops/dynops/internal/cmd/migrate/verify"
)

// NewCmdMigrate returns `dynops migrate` and its subcommands.
func NewCmdMigrate(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate <command>",
		Short: "Move a single table into one table per domain: plan, backfill, catch-up, verify, cutover, rollback",
		Long: `Migrate moves the items of one single table (PK/SK, overloaded GSIs) into one
table per domain without a maintenance window: backfill copies the items while
the application keeps writing, catch-up applies the changes made since from the
source's stream, verify compares, cutover fences the source and flips the
application's pointer. Runbook: runbooks/single-to-multi-table-migration.md.

The routes file (YAML) says where each item goes, by its key:

  version: 1
  source_key: [PK, SK]            # the source's key (default)
  routes:                         # the first rule that matches wins
    - name: users                 # optional
      table: dev-aiagent-users    # the destination (same key as the source)
      match: { PK: "TENANT#*", SK: "USER#*" }   # PREFIX*, exact, or "*"
      rename: { GSI1PK: user_list_key }         # optional
      drop: [GSI2SK]                            # optional

Example: modules/dynamodb-stack/examples/migration (tables.yaml, routes.yaml).
The state of a migration (stream position, checkpoints, cutover) is one JSON
file (--state, default $XDG_STATE_HOME/dynops/migrate/SOURCE.json).`,
	}
	cmd.AddCommand(plan.NewCmdPlan(f, nil))
	cmd.AddCommand(backfill.NewCmdBackfill(f, nil))
	cmd.AddCommand(catchup.NewCmdCatchUp(f, nil))
	cmd.AddCommand(verify.NewCmdVerify(f, nil))
	cmd.AddCommand(cutover.NewCmdCutover(f, nil))
	cmd.AddCommand(rollback.NewCmdRollback(f, nil))
	return cmd
}
