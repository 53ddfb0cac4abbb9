// Package dr groups the `dynops dr` commands: the status of a global table
// across regions, failover, failback and drills (DDB-DR-01).
package dr

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	drillCmd "github.com/dynops/dynops/internal/cmd/dr/drill"
	failbackCmd "github.com/dynops/dynops/internal/cmd/dr/failback"
	failoverCmd "github.com/dynops/dynops/internal/cmd/dr/failover"
	statusCmd "github.com/dynops/dynops/internal/cmd/dr/status"
	"github.com/dynops/dynops/internal/cmd/factory"
)

// NewCmdDR returns `dynops dr`.
func NewCmdDR(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dr <command>",
		Short: "Global tables and region failover: status, failover, failback, drill (DDB-DR-01)",
		Long: `dr moves a global table's writes between regions safely: a preflight, a write
fence (table resource policy) in the region writes leave, the active-region
pointer flipped in every region (SSM, and Route 53 where configured), and a
canary that proves the new region takes writes. See runbooks/dr-failover.md.`,
	}
	// DR commands fail fast: a half-dead region must not hold up the failover.
	cmdfacts.SetTimeout(cmd, 10*time.Second)
	cmd.AddCommand(statusCmd.NewCmdStatus(f, nil))
	cmd.AddCommand(failoverCmd.NewCmdFailover(f, nil))
	cmd.AddCommand(failbackCmd.NewCmdFailback(f, nil))
	cmd.AddCommand(drillCmd.NewCmdDrill(f, nil))
	return cmd
}
