// Package factory carries what every dynops command needs: IO streams, the
// global flags, AWS configuration, the clock, the audit recorder and the
// confirmation rule for destructive actions. Nothing in dynops reaches for
// globals; tests build a Factory with what they need.
package factory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/iostreams"
)

// Output formats of --output.
const (
	OutputTable = "table"
	OutputJSON  = "json"
)

// GlobalFlags are the flags every command takes.
type GlobalFlags struct {
	Region      string
	Profile     string
	EndpointURL string
	Output      string
	AuditLog    string
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
	// Audit is set once flags are parsed (root's PersistentPreRunE).
	Audit *audit.Recorder
	// LoadAWS loads AWS configuration; tests may replace it.
	LoadAWS func(ctx context.Context, o awsconfig.Options) (aws.Config, error)
}

// New returns a Factory on the given streams.
func New(ios *iostreams.IOStreams) *Factory {
	return &Factory{
		IOStreams: ios,
		Flags:     &GlobalFlags{Output: OutputTable},
		Now:       time.Now,
		LoadAWS:   awsconfig.Load,
	}
}

// AWSConfig loads AWS configuration from the global flags.
func (f *Factory) AWSConfig(ctx context.Context) (aws.Config, error) {
	return f.LoadAWS(ctx, awsconfig.Options{
		Region:      f.Flags.Region,
		Profile:     f.Flags.Profile,
		EndpointURL: f.Flags.EndpointURL,
		Timeout:     f.Flags.Timeout,
		Debug:       f.Flags.Debug,
		LogOutput:   f.IOStreams.ErrOut,
	})
}

// JSON reports whether --output json was asked for.
func (f *Factory) JSON() bool { return f.Flags.Output == OutputJSON }

// ExitError ends the process with Code without printing more: the command
// already said what went wrong (e.g. `dynops check` found failing rules).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ErrNotConfirmed is returned when a person declined a destructive action.
var ErrNotConfirmed = errors.New("not confirmed: nothing was changed")

// Confirmation describes a destructive action about to run.
type Confirmation struct {
	Yes    bool   // --yes: do it (otherwise a dry run)
	Env    string // the environment the target belongs to
	Target string // what a person must type in prod (usually the table name)
	Typed  string // --confirm: the same text, for non-interactive prod runs
}

// Confirm decides whether a destructive action goes ahead. Without --yes it is
// a dry run (false, nil). In prod it also needs the target's name typed at a
// prompt, or given with --confirm; a non-interactive prod run without it is
// refused with an error naming the flag.
func (f *Factory) Confirm(c Confirmation) (bool, error) {
	if !c.Yes {
		return false, nil
	}
	if c.Env != "prod" {
		return true, nil
	}
	if c.Typed != "" {
		if c.Typed != c.Target {
			return false, fmt.Errorf("--confirm %q does not match %q: nothing was changed", c.Typed, c.Target)
		}
		return true, nil
	}
	if !f.IOStreams.CanPrompt() {
		return false, fmt.Errorf("%s is in prod: run in a terminal to type its name, or pass --confirm %s; nothing was changed", c.Target, c.Target)
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "%s is in PROD. Type its name to continue: ", c.Target)
	line, err := bufio.NewReader(f.IOStreams.In).ReadString('\n')
	if err != nil && line == "" {
		return false, ErrNotConfirmed
	}
	if strings.TrimSpace(line) != c.Target {
		return false, ErrNotConfirmed
	}
	return true, nil
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
