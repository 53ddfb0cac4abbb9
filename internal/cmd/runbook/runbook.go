package runbook
import ("github.com/spf13/cobra"; "github.com/dynops/dynops/internal/cmd/factory")
func NewCmdRunbook(f *factory.Factory) *cobra.Command { return &cobra.Command{Use: "runbook"} }
