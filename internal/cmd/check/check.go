// Package check implements `dynops check`: live tables against the guideline.
package check

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/junit"
	"github.com/dynops/dynops/internal/sarif"
	"github.com/dynops/dynops/internal/securityhub"
)

// Options of `dynops check`.
type Options struct {
	Tables      []string
	Env         string
	AllowedEnvs []string
	ShowPassing bool
	// Version of dynops, named as the tool in SARIF output.
	Version string
	// ToSecurityHub imports the findings into AWS Security Hub (ASFF).
	ToSecurityHub bool
}

// Report is the result of a check, as printed by --output json.
type Report struct {
	Tables   []string            `json:"tables"`
	Findings []guideline.Finding `json:"findings"`
	Summary  Summary             `json:"summary"`
	// SecurityHub is what --to-security-hub imported, as read back.
	SecurityHub *securityhub.Result `json:"security_hub,omitempty"`
}

// Summary counts findings by status.
type Summary struct {
	Pass      int  `json:"pass"`
	Fail      int  `json:"fail"`
	Exception int  `json:"exception"`
	Failing   int  `json:"failing_errors"`
	OK        bool `json:"ok"`
}

// NewCmdCheck returns `dynops check`. runF replaces the run function in tests of flag parsing.
func NewCmdCheck(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "check (--table NAME ... | --env ENV)",
		Short: "Check live tables against the DynamoDB guideline, rule by rule",
		Long: `Check reads live tables and reports each guideline rule by its ID
(DDB-NAME-01, DDB-PITR-01, ...): pass, fail, or exception (a default the
team turned off with a recorded reason, tagged dynops:exception:<RULE>).

It also reads the CloudWatch alarms and the Lambda event source mappings on
each table's stream: DDB-MON-01 (throttling alarms on the table and its GSIs),
DDB-STREAM-04 (bisect, bounded retries and record age, a DLQ) and
DDB-STREAM-05 (IteratorAge and DLQ depth alarms). For a global table, every
replica is read in its own region: deletion protection (DDB-PROT-01) and PITR
(DDB-PITR-01); a replica that cannot be read fails (fail closed).

Every rule is explained in docs/guideline.md (the rule ID is the anchor,
e.g. docs/guideline.md#ddb-pitr-01); failing findings print their link.

--output sarif writes a SARIF 2.1.0 log for code scanning (one rule per
rule ID, results located by the resource's ARN); --output junit one test
case per table and rule. Both carry each rule's external controls (Security
Hub, AWS Config, checkov, trivy, Prowler; docs/guideline.md#external-controls).

Exit status 1 when an error-level rule fails, 0 otherwise.`,
		Example: `  dynops check --env prod
  dynops check --table prod-hoge-user --output json
  dynops check --env prod -o sarif > dynops.sarif   # GitHub code scanning
  dynops check --env prod -o junit > dynops.xml     # CI test reports`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{factory.OutputFormatsAnnotation: factory.OutputSARIF + "," + factory.OutputJUnit},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(opts.Tables) == 0 && opts.Env == "" {
				return factory.UsageErrorf("check needs --table NAME or --env ENV (e.g. --env dev)")
			}
			if len(opts.Tables) > 0 && opts.Env != "" {
				return factory.UsageErrorf("check takes --table or --env, not both")
			}
			opts.Version = cmd.Root().Version
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringSliceVarP(&opts.Tables, "table", "t", nil, "table to check (repeatable)")
	cmd.Flags().StringVarP(&opts.Env, "env", "e", "", "check every table whose name starts with ENV-")
	cmd.Flags().StringSliceVar(&opts.AllowedEnvs, "allowed-envs", guideline.DefaultEnvs(), "environments a table name may start with (DDB-NAME-01)")
	cmd.Flags().BoolVar(&opts.ShowPassing, "show-passing", true, "list passing rules too (table output)")
	cmd.Flags().BoolVar(&opts.ToSecurityHub, "to-security-hub", false, "import the findings into AWS Security Hub (ASFF, custom integration product/ACCOUNT/default) and resolve fixed ones")
	// It reads tables; with --to-security-hub it also writes findings.
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "no table was changed; with --to-security-hub the batches of findings already sent stay imported and the rest are not: run the same check again, it converges (each finding keeps its Id)")
	cmdfacts.SetTimeout(cmd, 20*time.Second)
	cmdfacts.SetTargets(cmd, "table", "env")
	return cmd
}

// Run checks the tables and prints the report; it returns ExitError{1} when an error-level rule fails.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	tables, err := tablesOf(ctx, clients, opts)
	if err != nil {
		return err
	}
	rep, err := checkTables(ctx, f, clients, tables, opts.AllowedEnvs)
	if err != nil {
		return err
	}
	if opts.ToSecurityHub {
		r, err := toSecurityHub(ctx, f, clients, rep)
		if err != nil {
			return err
		}
		rep.SecurityHub = &r
	}
	if err := show(f, opts, rep); err != nil {
		return err
	}
	if !rep.Summary.OK {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// tablesOf is the tables the run checks, sorted: --table, or every table
// named ENV-* for --env (none is an error).
func tablesOf(ctx context.Context, clients awsclients.Set, opts *Options) ([]string, error) {
	tables := opts.Tables
	if opts.Env != "" {
		var err error
		tables, err = guideline.TablesWithPrefix(ctx, clients.DynamoDB(), opts.Env+"-")
		if err != nil {
			return nil, err
		}
		if len(tables) == 0 {
			return nil, fmt.Errorf("no tables named %s-* in %s; check --env and --region", opts.Env, clients.Region())
		}
	}
	sort.Strings(tables)
	return tables, nil
}

// checkTables checks each table against the guideline, with a progress bar,
// and records the counts and the failing findings in the audit record.
func checkTables(ctx context.Context, f *factory.Factory, clients awsclients.Set, tables, allowedEnvs []string) (Report, error) {
	policy, err := f.ProtectPolicy()
	if err != nil {
		return Report{}, err
	}
	rep := Report{Tables: tables}
	f.IOStreams.Progress("reading CloudWatch alarms")
	bar := f.IOStreams.StartProgress("check: tables", int64(len(tables)))
	defer bar.Done()
	rep.Findings, err = guideline.CheckTables(ctx, guideline.Clients{
		DB: clients.DynamoDB(), Home: clients.Region(),
		Regional: func(region string) guideline.DynamoDB {
			return clients.In(region).DynamoDB()
		},
		CW:        clients.CloudWatch(),
		Lambda:    clients.Lambda(nil),
		Protected: policy.TableProtected,
	}, tables, allowedEnvs, func(i int, t string) {
		bar.Set(int64(i))
		bar.Status("checking %s", t)
	})
	if err != nil {
		return Report{}, err
	}
	bar.Set(int64(len(tables)))
	bar.Done()
	rep.Summary = summarize(rep.Findings)
	f.Audit.Counts(map[string]int64{"tables": int64(len(tables)), "pass": int64(rep.Summary.Pass), "fail": int64(rep.Summary.Fail),
		"exception": int64(rep.Summary.Exception), "failing_errors": int64(rep.Summary.Failing)})
	for _, fd := range rep.Findings {
		if fd.Failing() {
			f.Audit.Finding(fd.Rule + " " + fd.Resource)
		}
	}
	return rep, nil
}

// show shows the report in the requested form: the table, the JSON
// document, a SARIF log or a JUnit report.
func show(f *factory.Factory, opts *Options, rep Report) error {
	out := f.IOStreams.Out
	return view.ResultsIn(f, func(rep Report) error { return printTable(f.IOStreams, rep, opts.ShowPassing) }, map[string]func(Report) error{
		factory.OutputSARIF: func(rep Report) error { return sarif.Write(out, opts.Version, rep.Findings) },
		factory.OutputJUnit: func(rep Report) error {
			host, _ := os.Hostname()
			return junit.Write(out, rep.Tables, rep.Findings, f.Now(), host)
		},
	}).Show(rep)
}

// toSecurityHub imports the report's findings into Security Hub in the
// caller's account and the configured region.
func toSecurityHub(ctx context.Context, f *factory.Factory, clients awsclients.Set, rep Report) (securityhub.Result, error) {
	if err := f.Audit.Start(ctx, audit.Plan{Targets: rep.Tables, Counts: map[string]int64{"findings_to_import": int64(len(rep.Findings))}}); err != nil {
		return securityhub.Result{}, err
	}
	callerARN, account := f.Audit.Caller()
	partition := "aws"
	if p := strings.SplitN(callerARN, ":", 3); len(p) == 3 && p[1] != "" {
		partition = p[1]
	}
	t := securityhub.Target{Partition: partition, Region: clients.Region(), Account: account}
	endpoint, err := awsconfig.ServiceEndpoint("SECURITYHUB", "", "", f.Flags.AllowInsecureEndpoint)
	if err != nil {
		return securityhub.Result{}, err
	}
	hub := clients.SecurityHub(endpoint)
	bar := f.IOStreams.StartProgress("security hub: findings", int64(len(rep.Findings)))
	defer bar.Done()
	r, err := securityhub.Import(ctx, hub, t, rep.Tables, rep.Findings, f.Now(), func(done, _ int) { bar.Set(int64(done)) })
	bar.Done()
	if err != nil {
		return r, fmt.Errorf("--to-security-hub: %w", err)
	}
	f.Audit.Act(audit.ActImportFindings, r.ProductARN, r)
	f.Audit.Counts(map[string]int64{"securityhub_imported": int64(r.Imported), "securityhub_resolved": int64(r.Resolved), "securityhub_archived": int64(r.Archived)})
	f.IOStreams.Infof("Security Hub (%s): %d finding(s) imported: %d failed, %d passed, %d exception; %d resolved, %d archived\n", r.ProductARN, r.Imported, r.Failed, r.Passed, r.Warning, r.Resolved, r.Archived)
	return r, nil
}

func summarize(fs []guideline.Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Status {
		case guideline.Pass:
			s.Pass++
		case guideline.Fail:
			s.Fail++
		case guideline.Exception:
			s.Exception++
		}
		if f.Failing() {
			s.Failing++
		}
	}
	s.OK = s.Failing == 0
	return s
}

func printTable(ios *iostreams.IOStreams, rep Report, showPassing bool) error {
	var rows [][]string
	for _, f := range rep.Findings {
		if f.Status == guideline.Pass && !showPassing {
			continue
		}
		status := strings.ToUpper(string(f.Status))
		switch {
		case f.Failing():
			status = ios.Colour(iostreams.Red, status)
		case f.Status == guideline.Fail || f.Status == guideline.Exception:
			status = ios.Colour(iostreams.Yellow, status)
		default:
			status = ios.Colour(iostreams.Green, status)
		}
		msg := f.Message
		if f.Reason != "" {
			msg += " (exception: " + f.Reason + ")"
		}
		if f.Status != guideline.Pass {
			msg += " [" + f.Guideline + "]"
		}
		rows = append(rows, []string{f.Resource, f.Rule, string(f.Severity), status, msg})
	}
	if err := ios.Table([]string{"RESOURCE", "RULE", "SEVERITY", "STATUS", "DETAIL"}, rows); err != nil {
		return err
	}
	s := rep.Summary
	verdict := "all error-level rules pass"
	if !s.OK {
		verdict = fmt.Sprintf("%d error-level rule(s) fail", s.Failing)
	}
	fmt.Fprintf(ios.Out, "\n%d table(s): %d pass, %d fail, %d exception; %s\nThe rules and how to fix them: %s\n", len(rep.Tables), s.Pass, s.Fail, s.Exception, verdict, guideline.GuidelineFile)
	return nil
}
