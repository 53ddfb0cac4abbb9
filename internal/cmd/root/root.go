// Package root wires the dynops command tree, its global flags and the audit
// record every command run leaves.
package root

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	checkCmd "github.com/dynops/dynops/internal/cmd/check"
	dlqCmd "github.com/dynops/dynops/internal/cmd/dlq"
	drCmd "github.com/dynops/dynops/internal/cmd/dr"
	exportCmd "github.com/dynops/dynops/internal/cmd/export"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	pitrCmd "github.com/dynops/dynops/internal/cmd/pitr"
	tableCmd "github.com/dynops/dynops/internal/cmd/table"
	versionCmd "github.com/dynops/dynops/internal/cmd/version"
	"github.com/dynops/dynops/internal/poll"
)

// NewCmdRoot returns the dynops command tree.
func NewCmdRoot(f *factory.Factory, version string) *cobra.Command {
	var waitTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "dynops <command>",
		Short: "Operate DynamoDB tables on the bad days: check, restore, export, redrive, fail over",
		Long: `dynops operates DynamoDB tables that follow the design guideline:
it checks live tables against the guideline's rules, restores to a point in time,
exports to S3, redrives stream DLQs and fails over global tables.

Destructive actions are dry runs unless --yes is given; in prod they also ask
for the table name. Every action is appended to the audit log.`,
		Version:       versionCmd.Read(version).String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			fl := f.Flags
			if fl.Output != factory.OutputTable && fl.Output != factory.OutputJSON {
				return factory.UsageErrorf("--output %q: use table or json", fl.Output)
			}
			if err := flagcheck.Check(cmd.Flags()); err != nil {
				return factory.UsageErrorf("%w", err)
			}
			if !cmd.Flags().Changed("timeout") {
				fl.Timeout = commandTimeout(cmd.CommandPath())
			}
			cmd.SetContext(poll.WithWaitTimeout(cmd.Context(), waitTimeout))
			path := fl.AuditLog
			if path == "" {
				p, err := audit.DefaultPath()
				if err != nil {
					return err
				}
				path = p
			}
			f.Audit = audit.NewRecorder(path, f.Now)
			return nil
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.Flags.Region, "region", "", "AWS region (default: AWS_REGION or the profile's region)")
	pf.StringVar(&f.Flags.Profile, "profile", "", "AWS shared config profile (default: AWS_PROFILE)")
	pf.StringVar(&f.Flags.EndpointURL, "endpoint-url", "", "AWS endpoint URL, e.g. a local emulator (default: AWS_ENDPOINT_URL)")
	pf.StringVarP(&f.Flags.Output, "output", "o", factory.OutputTable, "output format: table or json")
	pf.StringVar(&f.Flags.AuditLog, "audit-log", "", "audit log file, JSON lines (default: $XDG_STATE_HOME/dynops/audit.jsonl)")
	pf.DurationVar(&f.Flags.Timeout, "timeout", 0, "bound on each AWS call, retries included (default: the command's, 10s-60s; see README)")
	pf.DurationVar(&waitTimeout, "wait-timeout", 0, "bound on waits for AWS jobs (restore, import, export, DR steps); 0: no limit")
	pf.BoolVar(&f.Flags.Debug, "debug", false, "log AWS requests and responses to stderr and keep raw SDK errors")
	cmd.SetVersionTemplate("{{.Version}}\n")

	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return factory.UsageErrorf("%w", err) })

	cmd.AddCommand(versionCmd.NewCmdVersion(f, version))
	cmd.AddCommand(checkCmd.NewCmdCheck(f, nil))
	cmd.AddCommand(pitrCmd.NewCmdPitr(f))
	cmd.AddCommand(tableCmd.NewCmdTable(f))
	cmd.AddCommand(dlqCmd.NewCmdDLQ(f))
	cmd.AddCommand(exportCmd.NewCmdExport(f))
	cmd.AddCommand(drCmd.NewCmdDR(f))
	markParents(cmd)
	return cmd
}

// Execute runs the command tree with args and returns the process exit code:
// 0 ok, 1 a failure (or failing findings), 2 bad input.
func Execute(ctx context.Context, f *factory.Factory, version string, args []string) int {
	root := NewCmdRoot(f, version)
	root.SetArgs(args)
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	f.IOStreams.Done()

	if f.Audit != nil && cmd != nil && cmd.Annotations["audit"] != "skip" && cmd.Runnable() {
		writeAudit(f, cmd, err)
	}

	var exit factory.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	default:
		return report(ctx, f, cmd, args, err)
	}
}

func writeAudit(f *factory.Factory, cmd *cobra.Command, runErr error) {
	rec := audit.Record{Command: cmd.CommandPath(), Params: map[string]string{}, Result: "ok"}
	cmd.Flags().Visit(func(fl *pflag.Flag) { rec.Params[fl.Name] = fl.Value.String() })
	// A command with --yes is a dry run unless --yes was given.
	if yes := cmd.Flags().Lookup("yes"); yes != nil && yes.Value.String() != "true" {
		rec.DryRun = true
		rec.Result = "dry-run"
	}
	var exit factory.ExitError
	if runErr != nil {
		rec.Result = "failed"
		if !errors.As(runErr, &exit) {
			rec.Error = runErr.Error()
		} else {
			rec.Error = exit.Error()
		}
	}
	if err := f.Audit.Write(rec); err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "warning: audit record not written: %v\n", err)
		return
	}
	if cmd.Flags().Lookup("yes") != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "audit: record appended to %s\n", f.Audit.Path())
	}
}
