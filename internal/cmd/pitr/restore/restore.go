// Package restore implements `dynops pitr restore`.
package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/pitrtime"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablesettings"
)

// Options of `dynops pitr restore`.
type Options struct {
	Table   string
	Time    time.Time
	Latest  bool
	Target  string
	Yes     bool
	Confirm []string
	Resume  bool
}

// DryRun is the --output json document of a dry run.
type DryRun struct {
	DryRun    bool          `json:"dry_run"`
	Plan      *restore.Plan `json:"plan"`
	Terraform string        `json:"terraform"`
}

// NewCmdRestore returns `dynops pitr restore`. runF replaces the run function in tests of flag parsing.
func NewCmdRestore(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	var timeFlag string
	cmd := &cobra.Command{
		Use:   "restore --table NAME (--time RFC3339 | --latest) [--target NAME] [--yes]",
		Short: "Restore a table to a point in time into a new table, and re-apply what the restore drops",
		Long: `Restore creates a NEW table from the source's point-in-time recovery, with the
source's billing mode, indexes and encryption, waits until it is ACTIVE, then
re-applies what a restore does not carry over (DDB-PITR-02): PITR and its period,
TTL, stream, tags (plus restored-from and restored-to-time), resource policy and,
last, deletion protection. It prints a Terraform import block to adopt the table.

Without --yes it prints the plan and changes nothing. A protected source (prod,
or anything dynops cannot show is not prod: docs/protection.md) also
needs its name typed (or --confirm NAME).

--resume finishes a restore that a killed or stopped run left half done (the
target restored, its settings not all re-applied): it needs --target, and takes
the existing target only when it provably is that restore: restored (its
RestoreSummary) from --table, to the --time asked (any time with --latest), and
without the restored-from tag a finished restore writes last. Anything else is
refused, naming what was found. A target that does not exist yet is restored as
usual; a finished one is read back, nothing changed.`,
		Example: `  dynops pitr restore --table prod-hoge-user --time 2026-11-21T09:30:00Z
  dynops pitr restore --table prod-hoge-user --latest --yes --confirm prod-hoge-user
  dynops pitr restore --table prod-hoge-user --latest --target prod-hoge-user-restored-20261121t093512z --resume --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Table == "" {
				return factory.UsageErrorf("pitr restore needs --table NAME (the table to restore from)")
			}
			if (timeFlag == "") == !opts.Latest {
				return factory.UsageErrorf("pitr restore needs exactly one of --time RFC3339 (e.g. --time 2026-11-21T09:30:00Z) or --latest")
			}
			if opts.Resume && opts.Target == "" {
				return factory.UsageErrorf("--resume needs --target NAME: the table the interrupted run was restoring into (its name is in that run's output and audit log); without --target a new name would start a second restore")
			}
			if timeFlag != "" {
				t, err := time.Parse(time.RFC3339, timeFlag)
				if err != nil {
					return factory.UsageErrorf("--time %q is not an RFC3339 time: write it like 2026-11-21T09:30:00Z", timeFlag)
				}
				opts.Time = t
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Table, "table", "t", "", "table to restore from")
	cmd.Flags().StringVar(&timeFlag, "time", "", "point in time to restore to, RFC3339, milliseconds allowed (e.g. 2026-11-21T09:30:00.250Z); both bounds of the window are accepted")
	cmd.Flags().BoolVar(&opts.Latest, "latest", false, "restore to the latest restorable time")
	cmd.Flags().StringVar(&opts.Target, "target", "", "name of the new table (default: {table}-restored-{UTC timestamp})")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "restore (without it: print the plan, change nothing)")
	cmd.Flags().BoolVar(&opts.Resume, "resume", false, "finish a half-done restore into --target (only one that provably is this restore)")
	factory.AddConfirmFlag(cmd.Flags(), &opts.Confirm, "the source table's name, for the restore of a protected table")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "a restore already started goes on in AWS (the audit log lists what was done); check with `dynops pitr status`/`aws dynamodb describe-table`, then re-apply settings by running the restore again with another --target, or delete the new table")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "target")
	return cmd
}

// usage marks the restore errors that are the caller's to fix (exit 2).
func usage(err error) error {
	switch {
	case errors.Is(err, restore.ErrOutsideWindow), errors.Is(err, restore.ErrPITROff),
		errors.Is(err, restore.ErrTargetExists), errors.Is(err, restore.ErrBadTarget):
		return factory.UsageErrorf("%w", err)
	}
	return err
}

// Run plans the restore, and with --yes (and the prod confirmation) runs it.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	// The guard comes first: a protected source is refused before its
	// settings are read (a refusal must not depend on reads that may fail).
	decided, err := guard.Decide(f, protect.ReadTable(ctx, db, opts.Table))
	if err != nil {
		return err
	}
	g, err := decided.Confirm(opts.Yes, opts.Confirm)
	if err != nil {
		return err
	}
	plan, err := restore.Prepare(ctx, db, restore.Request{Source: opts.Table, Target: opts.Target,
		Time: opts.Time, Latest: opts.Latest, Now: f.Now(), Resume: opts.Resume})
	if err != nil {
		return usage(err)
	}
	if g.DryRun() {
		return showDryRun(f, g, plan)
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{plan.Source, plan.Target},
		Counts: map[string]int64{"tables_to_create": boolCount(plan.Resume == nil), "settings_to_apply": int64(len(plan.Changes))}}); err != nil {
		return err
	}
	res, err := restoreTable(ctx, f, db, plan)
	if err != nil {
		return err
	}
	return show(f, res)
}

// show shows the finished restore: printResult, or the JSON document.
func show(f *factory.Factory, res *restore.Result) error {
	return view.Results(f, func(res *restore.Result) error { printResult(f, res); return nil }).Show(res)
}

// showDryRun records the planned restore and shows the plan: printPlan and
// the dry-run notice, or the DryRun document.
func showDryRun(f *factory.Factory, g *guard.Confirmed, plan *restore.Plan) error {
	f.Audit.Act(audit.ActRestoreTable, plan.Target, map[string]any{"source": plan.Source, "restore_time": plan.RestoreTime, "latest": plan.Latest, "planned_settings": plan.Changes})
	return view.Results(f, func(d DryRun) error {
		printPlan(f, d.Plan)
		g.PrintDryRun("restore")
		return nil
	}).Show(DryRun{DryRun: true, Plan: plan, Terraform: restore.Adoption(plan.Source, plan.Target)})
}

// restoreTable runs the planned restore, with its progress on stderr and
// each step in the audit record; a half-done restore's error says how to
// finish it.
func restoreTable(ctx context.Context, f *factory.Factory, db restore.DynamoDB, plan *restore.Plan) (*restore.Result, error) {
	res, err := restore.Run(ctx, db, plan, restore.Hooks{
		Restoring: func(status string, waited time.Duration) {
			f.IOStreams.Progress("restoring %s: %s (%s)", plan.Target, status, waited.Round(time.Second))
		},
		Restored: func(arn string, at time.Time) {
			f.Audit.Act(audit.ActRestoreTable, plan.Target, map[string]any{"source": plan.Source, "restore_time": at, "latest": plan.Latest, "arn": arn})
		},
		TookOver: func(e restore.Existing, why string) {
			f.IOStreams.Progress("taking over %s: %s", plan.Target, why)
			f.Audit.Act(audit.ActResumeRestore, plan.Target, map[string]any{"source": plan.Source, "found": e, "why": why})
		},
		Applied: func(c tablesettings.Change) {
			f.IOStreams.Progress("applied %s to %s", c.What, plan.Target)
			f.Audit.Act(audit.ActApplySetting, plan.Target, c)
		},
	})
	f.IOStreams.Done()
	if res != nil {
		f.Audit.Counts(map[string]int64{"tables_created": boolCount(res.TargetArn != "" && !res.Resumed), "tables_resumed": boolCount(res.Resumed), "settings_applied": int64(len(res.Applied))})
	}
	if err != nil {
		if res != nil && res.TargetArn != "" {
			return nil, fmt.Errorf("%w (the restored table %s exists with the settings applied so far, as the audit log lists; finish it with the same command plus --target %s --resume, or delete it and restore again)", err, plan.Target, plan.Target)
		}
		return nil, usage(err)
	}
	return res, nil
}

func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func printPlan(f *factory.Factory, p *restore.Plan) {
	out := f.IOStreams.Out
	when := pitrtime.Format(p.RestoreTime)
	if p.Latest {
		when = "latest restorable (now " + when + ")"
	}
	in := p.Input
	var idx []string
	for _, g := range in.GlobalSecondaryIndexOverride {
		idx = append(idx, aws.ToString(g.IndexName)+" (GSI)")
	}
	for _, l := range in.LocalSecondaryIndexOverride {
		idx = append(idx, aws.ToString(l.IndexName)+" (LSI)")
	}
	if len(idx) == 0 {
		idx = []string{"none"}
	}
	sse := "AWS owned key"
	if s := in.SSESpecificationOverride; s != nil && aws.ToBool(s.Enabled) {
		sse = string(s.SSEType) + " " + aws.ToString(s.KMSMasterKeyId)
	}
	fmt.Fprintf(out, "Restore plan\n")
	for _, kv := range [][2]string{
		{"source", p.Source},
		{"target", targetLine(p)},
		{"restore time", when},
		{"restorable window", p.Window.String()},
		{"billing mode", string(in.BillingModeOverride)},
		{"indexes", strings.Join(idx, ", ")},
		{"encryption", sse},
	} {
		fmt.Fprintf(out, "  %-18s %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(out, "\nThen re-apply what the restore drops (DDB-PITR-02), in this order:\n")
	printChanges(f, p.Changes)
}

func targetLine(p *restore.Plan) string {
	if p.Resume == nil {
		return p.Target + " (new table)"
	}
	return p.Target + " (exists, --resume takes it over: " + p.Resume.String() + ")"
}

func printChanges(f *factory.Factory, cs []tablesettings.Change) {
	rows := make([][]string, 0, len(cs))
	for i, c := range cs {
		rows = append(rows, []string{fmt.Sprint(i + 1), c.What, c.Detail})
	}
	if len(rows) == 0 {
		fmt.Fprintln(f.IOStreams.Out, "  nothing")
		return
	}
	_ = f.IOStreams.Table([]string{"STEP", "SETTING", "DETAIL"}, rows)
}

func printResult(f *factory.Factory, res *restore.Result) {
	out := f.IOStreams.Out
	p := res.Plan
	switch {
	case res.AlreadyDone:
		fmt.Fprintf(out, "%s is already a finished restore of %s (point in time %s, read back from the service): nothing changed.\n", p.Target, p.Source, pitrtime.Format(res.RestoreTime))
	case res.Resumed:
		fmt.Fprintf(out, "Resumed the restore of %s to %s (point in time %s, read back from the service).\n", p.Source, p.Target, pitrtime.Format(res.RestoreTime))
	default:
		fmt.Fprintf(out, "Restored %s to %s (point in time %s, read back from the service).\n", p.Source, p.Target, pitrtime.Format(res.RestoreTime))
	}
	if note := shifted(p, res.RestoreTime); note != "" {
		fmt.Fprintf(out, "NOTE: %s\n", note)
	}
	fmt.Fprintf(out, "\nApplied:\n")
	printChanges(f, res.Applied)
	s := res.Settings
	fmt.Fprintf(out, "\nRead back from %s: PITR %s, deletion protection %s, TTL %s, stream %s, %d tag(s), resource policy %s.\n",
		p.Target, onOff(s.PITR, fmt.Sprintf(" (%d days)", s.RecoveryPeriodInDays)), onOff(s.DeletionProtection, ""),
		orOff(s.TTLAttribute), orOff(s.StreamViewType), len(s.Tags), onOff(s.ResourcePolicy != "", ""))
	fmt.Fprintf(out, "\n%s\nNext: compare with the original:\n  dynops table diff --source %s --target %s --keys-out keys.jsonl\n",
		res.Terraform, p.Target, p.Source)
}

// shifted says when the service restored to another point in time than the
// one asked for (an explicit --time; --latest asks for whatever is latest).
func shifted(p *restore.Plan, got time.Time) string {
	if p.Latest || got.IsZero() || got.Equal(p.RestoreTime) {
		return ""
	}
	return fmt.Sprintf("asked for %s, the service restored to %s (%s %s); compare with table diff before repairing",
		pitrtime.Format(p.RestoreTime), pitrtime.Format(got), absDur(got.Sub(p.RestoreTime)), laterOrEarlier(got.Sub(p.RestoreTime)))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func laterOrEarlier(d time.Duration) string {
	if d < 0 {
		return "earlier"
	}
	return "later"
}

func onOff(on bool, detail string) string {
	if on {
		return "on" + detail
	}
	return "off"
}

func orOff(s string) string {
	if s == "" {
		return "off"
	}
	return s
}
