package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/iostreams"
)

// regionFlags name regions besides the configured one.
var regionFlags = []string{"regions", "source-region", "bucket-region"}

// addAuditFlags adds the audit flags every command takes.
func addAuditFlags(pf *pflag.FlagSet, fl *factory.GlobalFlags) {
	pf.StringVar(&fl.AuditLog, "audit-log", "", "audit log file, JSON lines, 0600 (default: $XDG_STATE_HOME/dynops/audit.jsonl)")
	pf.StringVar(&fl.Incident, "incident", "", "incident id written on every audit record (default: DYNOPS_INCIDENT)")
	pf.BoolVar(&fl.AuditClearKeys, "audit-clear-keys", false, "write key values to the audit log in clear (default: SHA-256 hashes, in details, errors and findings)")
	// --audit-hash-keys was the opt-in before hashing became the default: it
	// is still accepted, and does nothing.
	pf.Bool("audit-hash-keys", true, "")
	_ = pf.MarkDeprecated("audit-hash-keys", "key values are hashed by default now; --audit-clear-keys writes them in clear")
	pf.StringVar(&fl.AuditLogGroup, "audit-log-group", "", "also copy every audit record to this CloudWatch Logs group (it must exist; default: DYNOPS_AUDIT_LOG_GROUP); required to write a protected target")
	pf.StringVar(&fl.WithoutAuditLogGroup, "without-audit-log-group", "", "REASON: write a protected target without the central audit copy (break-glass role only; the reason is audited)")
}

// auditLogPath is --audit-log, or DYNOPS_AUDIT_LOG, or the default path.
func auditLogPath(fl *factory.GlobalFlags) (string, error) {
	if fl.AuditLog != "" {
		return fl.AuditLog, nil
	}
	if p := os.Getenv("DYNOPS_AUDIT_LOG"); p != "" {
		return p, nil
	}
	return audit.DefaultPath()
}

// newRecorder builds the run's audit recorder once flags are parsed.
func newRecorder(f *factory.Factory, cmd *cobra.Command, args []string, version string) (*audit.Recorder, error) {
	fl := f.Flags
	path, err := auditLogPath(fl)
	if err != nil {
		return nil, err
	}
	if fl.Incident == "" {
		fl.Incident = os.Getenv("DYNOPS_INCIDENT")
	}
	tags := f.AuditTags
	if tags.Incident == "" {
		tags.Incident = fl.Incident
	}
	id := audit.Identity{Version: version, Profile: firstNonEmpty(fl.Profile, os.Getenv("AWS_PROFILE")),
		Endpoint: firstNonEmpty(fl.EndpointURL, os.Getenv("AWS_ENDPOINT_URL"))}
	var rec *audit.Recorder
	o := audit.Options{Path: path, Now: f.Now, ClearKeys: fl.AuditClearKeys, Identity: id, Tags: tags,
		Caller: func(ctx context.Context) (audit.Caller, error) {
			clients, err := f.AWS(ctx)
			if err != nil {
				return audit.Caller{}, err
			}
			rec.AddRegion(clients.Region())
			// The identity is best effort (the record says why it is missing):
			// one retry, not the data path's patience.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			out, err := clients.STS(2).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if err != nil {
				return audit.Caller{}, fmt.Errorf("sts GetCallerIdentity: %w", err)
			}
			return audit.Caller{ARN: aws.ToString(out.Arn), Account: aws.ToString(out.Account)}, nil
		}}
	if fl.AuditLogGroup == "" {
		fl.AuditLogGroup = os.Getenv("DYNOPS_AUDIT_LOG_GROUP")
	}
	if fl.AuditLogGroup != "" {
		o.Sink = &lazyLogsSink{f: f, group: fl.AuditLogGroup}
	}
	rec = audit.New(o)
	params := map[string]string{}
	var targets []string
	cmd.Flags().Visit(func(p *pflag.Flag) {
		params[p.Name] = audit.Param(p.Name, p.Value.String(), !fl.AuditClearKeys)
		if contains(regionFlags, p.Name) {
			for _, r := range flagValues(p) {
				rec.AddRegion(strings.TrimSpace(r))
			}
		}
	})
	targetFlags, _ := cmdfacts.Targets(cmd)
	for _, name := range targetFlags {
		if p := cmd.Flags().Lookup(name); p != nil && p.Changed {
			targets = append(targets, flagValues(p)...)
		}
	}
	if fl.Region != "" {
		rec.AddRegion(fl.Region)
	}
	command := strings.Join(append([]string{cmd.CommandPath()}, args...), " ")
	rec.SetCommand(command, params, targets)
	return rec, nil
}

// lazyLogsSink builds its CloudWatch Logs client on the first record, from the
// run's AWS configuration.
type lazyLogsSink struct {
	f     *factory.Factory
	group string
	sink  *audit.CloudWatchLogs
}

func (s *lazyLogsSink) Name() string { return "CloudWatch Logs group " + s.group }

func (s *lazyLogsSink) Put(ctx context.Context, rec audit.Record) error {
	if s.sink == nil {
		clients, err := s.f.AWS(ctx)
		if err != nil {
			return err
		}
		s.sink = &audit.CloudWatchLogs{Client: clients.CloudWatchLogs(), Group: s.group}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return s.sink.Put(ctx, rec)
}

// finishAudit writes the run's `finished` record.
func finishAudit(ctx context.Context, f *factory.Factory, cmd *cobra.Command, runErr error, code int) {
	out := audit.Outcome{ExitCode: code}
	if yes := cmd.Flags().Lookup("yes"); yes != nil && yes.Value.String() != "true" {
		out.DryRun = true
	}
	var exit factory.ExitError
	switch {
	case errors.As(runErr, &exit) && exit.Code == exitcode.Stopped:
		out.Stopped = true
	case errors.As(runErr, &exit) && exit.Code == exitcode.Usage:
		out.Refused = true // e.g. a runbook step refused as bad input: not "findings"
	case runErr == nil, errors.As(runErr, &exit):
	case factory.IsUsageError(runErr), errors.Is(runErr, guard.ErrNotConfirmed), errors.Is(runErr, audit.ErrNotAudited):
		out.Refused, out.Err = true, runErr
	default:
		out.Err = runErr
	}
	if factory.IsUsageError(runErr) && !f.AWSLoaded() {
		// Nothing was attempted: the typo is answered at once, not after
		// STS has been retried against an endpoint that may not answer.
		f.Audit.SkipCaller("not looked up: the command line was refused before any AWS call")
	}
	if err := f.Audit.Finish(ctx, out); err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "warning: audit record incomplete: %v\n", err)
		return
	}
	if cmd.Flags().Lookup("yes") != nil && f.Audit.Started() {
		fmt.Fprintf(f.IOStreams.ErrOut, "audit: record appended to %s (run %s)\n", f.Audit.Path(), f.Audit.RunID())
	}
}

// execFunc runs a dynops command line in-process on a fresh Factory, for
// `dynops runbook run`.
func execFunc(parent *factory.Factory, version string) func(context.Context, []string, factory.ExecStreams) int {
	return func(ctx context.Context, args []string, s factory.ExecStreams) int {
		ios := &iostreams.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut}
		ios.SetTTY(s.CanPrompt, false, s.CanPrompt)
		child := factory.New(ios)
		child.Now, child.LoadAWS = parent.Now, parent.LoadAWS
		child.AuditTags = s.Tags
		return Execute(ctx, child, version, args)
	}
}

// flagValues is a flag's values: each element of a list flag (its String()
// is "[a,b]", CSV-quoted), or the one value of any other.
func flagValues(p *pflag.Flag) []string {
	if sv, ok := p.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{p.Value.String()}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
