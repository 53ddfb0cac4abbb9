// Package root wires the dynops command tree, its global flags and the audit
// record every command run leaves.
package root

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsconfig"
	auditCmd "github.com/dynops/dynops/internal/cmd/audit"
	checkCmd "github.com/dynops/dynops/internal/cmd/check"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	dlqCmd "github.com/dynops/dynops/internal/cmd/dlq"
	drCmd "github.com/dynops/dynops/internal/cmd/dr"
	exportCmd "github.com/dynops/dynops/internal/cmd/export"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	itemCmd "github.com/dynops/dynops/internal/cmd/item"
	migrateCmd "github.com/dynops/dynops/internal/cmd/migrate"
	pitrCmd "github.com/dynops/dynops/internal/cmd/pitr"
	runbookCmd "github.com/dynops/dynops/internal/cmd/runbook"
	shardCmd "github.com/dynops/dynops/internal/cmd/shard"
	tableCmd "github.com/dynops/dynops/internal/cmd/table"
	versionCmd "github.com/dynops/dynops/internal/cmd/version"
	"github.com/dynops/dynops/internal/iostreams"
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

Destructive actions are dry runs unless --yes is given; a protected target
(prod, or anything dynops cannot show is not prod) also needs its name typed
(or --confirm NAME). Every action is appended to the audit log.`,
		Version:       versionCmd.Read(version).String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			fl := f.Flags
			if formats := factory.OutputFormats(cmd.Annotations); !slices.Contains(formats, fl.Output) {
				return factory.UsageErrorf("--output %q: use %s or %s", fl.Output, strings.Join(formats[:len(formats)-1], ", "), formats[len(formats)-1])
			}
			f.IOStreams.SetWide(fl.Output == factory.OutputWide)
			if fl.Output == factory.OutputJSON {
				f.IOStreams.SetJSON() // stdout: the JSON document only
			}
			if err := setJQ(f); err != nil {
				return err
			}
			if err := flagcheck.Check(cmd.Flags()); err != nil {
				return factory.UsageErrorf("%w", err)
			}
			if !cmd.Flags().Changed("timeout") {
				fl.Timeout = commandTimeout(cmd)
			}
			cmd.SetContext(poll.WithWaitTimeout(cmd.Context(), waitTimeout))
			rec, err := newRecorder(f, cmd, args, version)
			if err != nil {
				return err
			}
			f.Audit = rec
			return nil
		},
	}
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.Flags.Region, "region", "", "AWS region (default: AWS_REGION or the profile's region)")
	flagcheck.Region(pf, "region")
	pf.StringVar(&f.Flags.Profile, "profile", "", "AWS shared config profile (default: AWS_PROFILE)")
	pf.StringVar(&f.Flags.EndpointURL, "endpoint-url", "", "AWS endpoint URL, e.g. a local emulator (default: AWS_ENDPOINT_URL)")
	pf.BoolVar(&f.Flags.AllowInsecureEndpoint, "allow-insecure-endpoint", false, "let --endpoint-url (or AWS_ENDPOINT_URL) be plain http to a host other than this machine: credentials and items then cross the network unencrypted")
	pf.StringVarP(&f.Flags.Output, "output", "o", factory.OutputTable, "output format: table (fitted to the terminal), wide (every cell whole) or json (check also takes sarif and junit)")
	pf.StringVar(&f.Flags.JQ, "jq", "", "filter the -o json document with a jq expression, e.g. --jq '.[].table' (each result on a line, strings unquoted)")
	pf.StringSliceVar(&f.Flags.ProtectedEnvs, "protected-envs", nil, "envs protected on top of prod, production, prd, live (also DYNOPS_PROTECTED_ENVS and the config file; see docs/protection.md)")
	addAuditFlags(pf, f.Flags)
	pf.DurationVar(&f.Flags.Timeout, "timeout", 0, "bound on each AWS call, retries included (default: the command's, 10s-60s; see docs/exit-codes.md)")
	flagcheck.Range(pf, "timeout", "", "24h", "")
	pf.DurationVar(&waitTimeout, "wait-timeout", 0, "bound on waits for AWS jobs (restore, import, export, DR steps); 0: no limit")
	flagcheck.Range(pf, "wait-timeout", "0s", "", "0: no limit")
	pf.BoolVar(&f.Flags.Debug, "debug", false, "log AWS requests and responses to stderr and keep raw SDK errors")
	cmd.SetVersionTemplate("{{.Version}}\n")

	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return factory.UsageErrorf("%w", err) })

	cmd.AddCommand(versionCmd.NewCmdVersion(f, version))
	cmd.AddCommand(checkCmd.NewCmdCheck(f, nil))
	cmd.AddCommand(pitrCmd.NewCmdPitr(f))
	cmd.AddCommand(tableCmd.NewCmdTable(f))
	cmd.AddCommand(dlqCmd.NewCmdDLQ(f))
	cmd.AddCommand(exportCmd.NewCmdExport(f))
	cmd.AddCommand(itemCmd.NewCmdItem(f))
	cmd.AddCommand(drCmd.NewCmdDR(f))
	cmd.AddCommand(auditCmd.NewCmdAudit(f))
	cmd.AddCommand(runbookCmd.NewCmdRunbook(f))
	cmd.AddCommand(shardCmd.NewCmdShard(f))
	f.Exec = execFunc(f, version)
	cmd.AddCommand(migrateCmd.NewCmdMigrate(f))
	markParents(cmd)
	acceptDays(cmd)
	return cmd
}

// acceptDays lets every duration flag of the tree take days (2d).
func acceptDays(c *cobra.Command) {
	flagcheck.Durations(c.PersistentFlags())
	flagcheck.Durations(c.Flags())
	for _, sub := range c.Commands() {
		acceptDays(sub)
	}
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
	if jqErr := f.IOStreams.JQErr(); jqErr != nil {
		err = factory.UsageErrorf("%w", jqErr) // stdout lacks what was asked: bad input, whatever else happened
	}

	code := exitCode(ctx, f, cmd, args, err)
	reportThrottles(f)
	if f.Audit != nil && cmd != nil && !cmdfacts.AuditSkipped(cmd) && cmd.Runnable() {
		finishAudit(ctx, f, cmd, err, code)
	}
	return code
}

// setJQ compiles --jq for the output layer: every -o json document goes
// through it (iostreams.PrintJSON). Without -o json it is refused.
func setJQ(f *factory.Factory) error {
	fl := f.Flags
	if fl.JQ == "" {
		return nil
	}
	if fl.Output != factory.OutputJSON {
		return factory.UsageErrorf("--jq %q filters the JSON document: add -o json (the output is %s)", fl.JQ, fl.Output)
	}
	jq, err := iostreams.ParseJQ(fl.JQ)
	if err != nil {
		return factory.UsageErrorf("%w", err)
	}
	f.IOStreams.SetJQ(jq)
	return nil
}

func exitCode(ctx context.Context, f *factory.Factory, cmd *cobra.Command, args []string, err error) int {
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

// reportThrottles says on stderr how often DynamoDB throttled the run, per
// reason, with the fix of each cause, and puts the counts in the audit
// record (throttled.<reason>).
func reportThrottles(f *factory.Factory) {
	lines := f.Throttles().Summary()
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(f.IOStreams.ErrOut, "DynamoDB throttled this run (attempts per reason; the SDK retried them):")
	for _, l := range lines {
		fmt.Fprintf(f.IOStreams.ErrOut, "  %s\n", l)
	}
	if f.Audit != nil {
		f.Audit.Counts(f.Throttles().AuditCounts())
	}
}
