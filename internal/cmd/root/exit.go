package root

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/poll"
	"github.com/dynops/dynops/internal/throttle"
)

// commandTimeout is the bound on one AWS call that cmd declares (or its
// nearest ancestor does), for a run without --timeout.
func commandTimeout(cmd *cobra.Command) time.Duration {
	if d, ok := cmdfacts.Timeout(cmd); ok {
		return d
	}
	return awsconfig.DefaultTimeout
}

// unknownState is the interrupt state of a command that declares none: fail
// closed, claim nothing.
const unknownState = "dynops cannot say what it left behind (the audit log lists what was done); check the target before running the command again"

// stateAfterInterrupt is what cmd declares a Ctrl-C leaves behind.
func stateAfterInterrupt(cmd *cobra.Command) string {
	if cmd != nil {
		if s := cmdfacts.Interrupt(cmd); s != "" {
			return s
		}
	}
	return unknownState
}

// markParents makes every command that only groups others fail on a
// mistyped subcommand (exit 2, with cobra's suggestions) instead of printing
// help and exiting 0; called alone it prints its help and exits 2 too.
func markParents(c *cobra.Command) {
	for _, sub := range c.Commands() {
		markParents(sub)
	}
	if !c.HasParent() || !c.HasSubCommands() || c.Runnable() {
		return
	}
	cmdfacts.SkipAudit(c)
	c.Args = cobra.ArbitraryArgs
	// The mistyped subcommand usually comes with its flags (`pitr restroe
	// --table T --latest`): ignore the flags the parent does not know, so the
	// answer is the suggestion and not "unknown flag: --table".
	c.FParseErrWhitelist = cobra.FParseErrWhitelist{UnknownFlags: true}
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return factory.UsageErrorf("%s needs a subcommand (see the list above)", cmd.CommandPath())
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return factory.UsageErrorf("%s\n\nRun '%s --help' for its commands.", msg, cmd.CommandPath())
	}
}

// ErrorDoc is the --output json document of a failed command.
type ErrorDoc struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody says what failed.
type ErrorBody struct {
	Message  string `json:"message"`
	Code     string `json:"code"`
	ExitCode int    `json:"exit_code"`
	// Throttles are the run's throttled DynamoDB attempts per reason.
	Throttles map[string]int64 `json:"throttles,omitempty"`
}

// classify returns the exit code of err and a short code for JSON.
func classify(ctx context.Context, cmd *cobra.Command, err error) (int, string) {
	var to *awsconfig.TimeoutError
	var nf *awsconfig.NotFoundError
	var un *awsconfig.UnreachableError
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err()) || errors.Is(context.Cause(ctx), context.Canceled)):
		return exitcode.Interrupted, "interrupted"
	case cmd == nil || factory.IsUsageError(err) || strings.HasPrefix(err.Error(), "unknown command"):
		return exitcode.Usage, "usage"
	case errors.As(err, &to), errors.Is(err, poll.ErrTimeout):
		return exitcode.Timeout, "timeout"
	case errors.As(err, &nf):
		return exitcode.Failure, "not_found"
	case errors.As(err, &un):
		return exitcode.Failure, "unreachable"
	}
	return exitcode.Failure, "failure"
}

// report prints err (stderr; and a JSON error object on stdout with -o json)
// and returns the exit code.
func report(ctx context.Context, f *factory.Factory, cmd *cobra.Command, args []string, err error) int {
	code, kind := classify(ctx, cmd, err)
	msg := err.Error()
	if code == exitcode.Interrupted {
		path := "dynops"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		msg = interruptedMessage(path, err, stateAfterInterrupt(cmd))
	} else if why := throttle.Unexplained(err); why != "" {
		msg += "\n" + why
	}
	// One JSON document on stdout: the error object, unless the command
	// already wrote its result (e.g. a report with the failures in it).
	if (f.JSON() || jsonAsked(args)) && !f.IOStreams.WroteJSON() {
		_ = f.IOStreams.PrintJSONUnfiltered(ErrorDoc{Error: ErrorBody{Message: msg, Code: kind, ExitCode: code, Throttles: f.Throttles().Counts()}})
	}
	if code == exitcode.Interrupted {
		fmt.Fprintln(f.IOStreams.ErrOut, msg)
	} else {
		fmt.Fprintf(f.IOStreams.ErrOut, "error: %s\n", msg)
	}
	return code
}

// interruptedMessage is the one line a Ctrl-C prints: what path was doing,
// the guidance the error itself carries (e.g. "the source stays fenced ...
// rollback"), and the state the command declares it leaves.
func interruptedMessage(path string, err error, state string) string {
	what, guidance := doing(err)
	msg := fmt.Sprintf("interrupted: %s stopped while %s", path, what)
	if guidance != "" {
		msg += "; " + guidance
	}
	return msg + "; " + state
}

// cancelled are the texts of a cancelled context in an error chain.
var cancelled = []string{"context canceled", "context deadline exceeded"}

// doing splits an interrupted command's error into what it was doing (its own
// context, without the SDK's chain: "scanning T segment 1/4") and the
// guidance wrapped around the cancellation ("cutover stopped at drain:
// context canceled. S stays fenced ...": the part after the cancellation).
func doing(err error) (what, guidance string) {
	msg := strings.TrimPrefix(err.Error(), "interrupted: ")
	// The guidance follows the last cancellation in the chain.
	end := -1
	for _, c := range cancelled {
		if i := strings.LastIndex(msg, c); i >= 0 && i+len(c) > end {
			end = i + len(c)
		}
	}
	if end >= 0 {
		guidance = strings.TrimSpace(strings.TrimLeft(msg[end:], ".;:, \n"))
		msg = msg[:end]
	}
	for _, cut := range []string{": operation error ", ": context canceled", ": context deadline exceeded", ": waiting for ", "\n"} {
		if i := strings.Index(msg, cut); i > 0 {
			msg = msg[:i]
		}
	}
	msg = strings.TrimSpace(msg)
	for _, c := range cancelled {
		if msg == c {
			msg = ""
		}
	}
	if msg == "" {
		msg = "working"
	}
	return msg, strings.ReplaceAll(guidance, "\n", " ")
}

// jsonAsked reports -o json on a command line that failed before its
// flags were parsed (an unknown command or flag).
func jsonAsked(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-ojson", a == "--output=json", a == "-o=json":
			return true
		case (a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == factory.OutputJSON:
			return true
		}
	}
	return false
}
