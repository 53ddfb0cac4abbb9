// Package dlq implements `dynops dlq`: the DLQs of DynamoDB stream consumers
// (inspect, redrive) and plain SQS DLQs (move).
package dlq

import (
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/dlq/inspect"
	"github.com/dynops/dynops/internal/cmd/dlq/move"
	"github.com/dynops/dynops/internal/cmd/dlq/redrive"
	"github.com/dynops/dynops/internal/cmd/factory"
)

// NewCmdDLQ returns `dynops dlq` and its commands.
func NewCmdDLQ(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq <command>",
		Short: "Inspect and redrive the DLQs of stream consumers; move plain SQS DLQs",
		Long: `When a stream consumer exhausts its retries, Lambda puts an on-failure record
in the DLQ (DDB-STREAM-04). It holds only where the batch is in the stream, and
the stream keeps records for 24 hours (DDB-STREAM-05): inspect the DLQ, fix the
consumer, then redrive before the records are gone. See runbooks/dlq-redrive.md.`,
	}
	cmd.AddCommand(inspect.NewCmdInspect(f, nil))
	cmd.AddCommand(redrive.NewCmdRedrive(f, nil))
	cmd.AddCommand(move.NewCmdMove(f, nil))
	return cmd
}
