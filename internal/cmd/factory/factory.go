// Package factory carries what every dynops command needs: IO streams, the
// global flags, AWS configuration, the clock, the audit recorder and the
// confirmation rule for destructive actions. Nothing in dynops reaches for
// globals; tests build a Factory with what they need.
package factory

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/throttle"
)

// Output formats of --output.
const (
	OutputTable = "table"
	// OutputWide is the table with every cell whole (no fitting to the terminal).
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputSARIF = "sarif"
	OutputJUnit = "junit"
)

// OutputFormatsAnnotation lists, comma separated, the --output formats a
// command takes on top of table and json (e.g. "sarif,junit" on check).
const OutputFormatsAnnotation = "dynops/output-formats"

// OutputFormats returns the --output formats of a command with annotations.
func OutputFormats(annotations map[string]string) []string {
	out := []string{OutputTable, OutputWide, OutputJSON}
	if extra := annotations[OutputFormatsAnnotation]; extra != "" {
		out = append(out, strings.Split(extra, ",")...)
	}
	return out
}

// GlobalFlags are the flags every command takes.
type GlobalFlags struct {
	Region      string
	Profile     string
	EndpointURL string
	// AllowInsecureEndpoint is --allow-insecure-endpoint: plain http to a
	// host other than this machine.
	AllowInsecureEndpoint bool
	Output                string
	// JQ is --jq: a jq expression applied to the -o json document.
	JQ       string
	AuditLog string
	// ProtectedEnvs is --protected-envs: envs protected on top of the built-in ones.
	ProtectedEnvs []string
	// Incident ties every audit record of the run to an incident
	// (--incident, or DYNOPS_INCIDENT).
	Incident       string
	AuditClearKeys bool   // --audit-clear-keys: key values in clear (hashed by default)
	AuditLogGroup  string // --audit-log-group (or DYNOPS_AUDIT_LOG_GROUP): central copy in CloudWatch Logs
	// WithoutAuditLogGroup is --without-audit-log-group REASON: a protected
	// write without the central copy (break-glass role only).
	WithoutAuditLogGroup string
	// Timeout bounds each AWS call (--timeout; 0: the command's default).
	Timeout time.Duration
	// Debug logs AWS requests and keeps raw SDK errors (--debug).
	Debug bool
}

// Factory is what commands are built from.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Flags     *GlobalFlags
	Now       func() time.Time
	// Audit is set once flags are parsed (root's PersistentPreRunE). A
	// command that changes something calls Audit.Start right before its
	// first write and does not act when it fails.
	Audit *audit.Recorder
	// AuditTags are set on the runs `dynops runbook run` makes: the
	// runbook, the step and the runbook's own run.
	AuditTags audit.Tags
	// Exec runs a dynops command line in-process, through the same command
	// tree, on a fresh Factory (set by root; runbooks use it).
	Exec func(ctx context.Context, args []string, s ExecStreams) int
	// LoadAWS loads AWS configuration; tests may replace it.
	LoadAWS func(ctx context.Context, o awsconfig.Options) (aws.Config, error)
	// Getenv reads the environment (os.Getenv; tests may replace it).
	Getenv func(string) string

	in *bufio.Reader // stdin, shared by the prompts of one run
	// awsCfg is the run's AWS configuration, loaded once (awsConfig).
	awsMu   sync.Mutex
	awsCfg  aws.Config
	awsDone bool
	// unanswered: the endpoints that timed out in this run (awsconfig.Unanswered).
	unanswered *awsconfig.Unanswered
	// throttles counts the run's DynamoDB throttles per reason (Throttles).
	throttlesOnce sync.Once
	throttles     *throttle.Recorder
}

// New returns a Factory on the given streams.
func New(ios *iostreams.IOStreams) *Factory {
	return &Factory{
		IOStreams: ios,
		Flags:     &GlobalFlags{Output: OutputTable},
		Now:       time.Now,
		LoadAWS:   awsconfig.Load,
		Getenv:    os.Getenv,

		unanswered: &awsconfig.Unanswered{},
	}
}

// ExecStreams are the streams and audit tags of an in-process run.
type ExecStreams struct {
	In        io.Reader
	Out       io.Writer
	ErrOut    io.Writer
	CanPrompt bool
	Tags      audit.Tags
}

// awsConfig returns the run's AWS configuration, loaded from the global flags
// the first time a command asks and shared by every later call of the run (a
// failed load is not kept: the next call tries again). Each caller gets its
// own copy, so a per-Region override does not leak into the others.
func (f *Factory) awsConfig(ctx context.Context) (aws.Config, error) {
	f.awsMu.Lock()
	defer f.awsMu.Unlock()
	if f.awsDone {
		return f.awsCfg.Copy(), nil
	}
	cfg, err := f.loadAWS(ctx)
	if err != nil {
		return aws.Config{}, err
	}
	f.awsCfg, f.awsDone = cfg, true
	return cfg.Copy(), nil
}

// AWS returns the clients of the run's AWS configuration (loaded once): the
// one way a command gets an AWS client.
func (f *Factory) AWS(ctx context.Context) (awsclients.Set, error) {
	cfg, err := f.awsConfig(ctx)
	if err != nil {
		return awsclients.Set{}, err
	}
	return awsclients.New(cfg).CountingThrottles(f.Throttles()), nil
}

// Throttles is the run's count of DynamoDB throttles per reason, fed by
// every DynamoDB client of f.AWS (the SDK retries most of them: they would
// go unseen). The first throttle of each reason is said on stderr at once,
// with its cause and fix; root puts the counts in the audit record and a
// summary on stderr at the end of the run.
func (f *Factory) Throttles() *throttle.Recorder {
	f.throttlesOnce.Do(func() {
		f.throttles = throttle.NewRecorder(func(e throttle.Explanation) {
			f.IOStreams.Notef("throttled (%s, retrying): %s\n", e.Reason.Reason, e.Advice)
		})
	})
	return f.throttles
}

// AWSForQueue returns the run's clients in the region of an SQS queue URL
// (a queue lives in one region: asking another only answers "no such
// queue"), saying on stderr when that is not the run's region.
func (f *Factory) AWSForQueue(ctx context.Context, queueURL string) (awsclients.Set, error) {
	c, err := f.AWS(ctx)
	if err != nil {
		return c, err
	}
	region, note := awsconfig.QueueRegion(c.Region(), queueURL)
	f.IOStreams.Infof("%s", note)
	return c.In(region), nil
}

// AWSLoaded reports whether this run loaded its AWS config, the step
// before any AWS call: a run refused after it knows who it was.
func (f *Factory) AWSLoaded() bool {
	f.awsMu.Lock()
	defer f.awsMu.Unlock()
	return f.awsDone
}

func (f *Factory) loadAWS(ctx context.Context) (aws.Config, error) {
	cfg, err := f.LoadAWS(ctx, awsconfig.Options{
		Region:                f.Flags.Region,
		Profile:               f.Flags.Profile,
		EndpointURL:           f.Flags.EndpointURL,
		AllowInsecureEndpoint: f.Flags.AllowInsecureEndpoint,
		Timeout:               f.Flags.Timeout,
		Debug:                 f.Flags.Debug,
		LogOutput:             f.IOStreams.ErrOut,
		Unanswered:            f.unanswered,
	})
	var re *awsconfig.RegionError
	if errors.As(err, &re) {
		return cfg, UsageErrorf("%w", err)
	}
	return cfg, err
}

// JSON reports whether --output json was asked for.
func (f *Factory) JSON() bool { return f.Flags.Output == OutputJSON }

// ExitError ends the process with Code without printing more: the command
// already said what went wrong (e.g. `dynops check` found failing rules).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// AddConfirmFlag registers --confirm, the one definition every command that
// changes protected targets uses: repeatable and comma-separated
// (--confirm a --confirm b, or --confirm a,b), each value the name of a
// target, to confirm it without a terminal (Confirmation.Typed).
func AddConfirmFlag(fl *pflag.FlagSet, p *[]string, what string) {
	fl.StringSliceVar(p, "confirm", nil, what+", to confirm without a terminal (repeatable or comma-separated: --confirm a,b)")
}

// ProtectPolicy is the protection policy of this run: the built-in envs plus
// the config file, DYNOPS_PROTECTED_ENVS / DYNOPS_UNPROTECTED_ENVS and
// --protected-envs (see internal/protect).
func (f *Factory) ProtectPolicy() (protect.Policy, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	p, err := protect.LoadPolicy(protect.Settings{Flag: f.Flags.ProtectedEnvs, Getenv: getenv})
	if err != nil {
		return p, UsageErrorf("protection settings: %w; nothing was changed", err)
	}
	return p, nil
}

// Stdin is the one buffered reader over IOStreams.In that every prompt of
// a run reads its lines from (guard's typed-name prompts).
func (f *Factory) Stdin() *bufio.Reader {
	if f.in == nil {
		f.in = bufio.NewReader(f.IOStreams.In)
	}
	return f.in
}

// usageError marks errors in the command line itself (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// UsageErrorf returns an error about bad input that exits with code 2.
func UsageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// IsUsageError reports whether err is about bad input.
func IsUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// CallerArn returns the run's AWS identity (sts:GetCallerIdentity, with
// one retry): for decisions that depend on who runs dynops (the break-glass
// role), not the best-effort identity of the audit record.
func (f *Factory) CallerArn(ctx context.Context) (string, error) {
	clients, err := f.AWS(ctx)
	if err != nil {
		return "", err
	}
	out, err := clients.STS(2).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("sts GetCallerIdentity: %w", err)
	}
	return aws.ToString(out.Arn), nil
}

// PrintResult writes a command's --output json result: v, with the run's
// throttled DynamoDB attempts per reason added as "throttles" when there were
// any and v is a JSON object (Throttles). The one way a command that reads or
// writes items prints its result.
func (f *Factory) PrintResult(v any) error {
	counts := f.Throttles().Counts()
	if len(counts) == 0 {
		return f.IOStreams.PrintJSON(v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return f.IOStreams.PrintJSON(v)
	}
	obj["throttles"], _ = json.Marshal(counts)
	return f.IOStreams.PrintJSON(obj)
}
