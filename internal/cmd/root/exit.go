package root

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/poll"
)

// commandTimeouts are the per-operation AWS timeouts that suit each command
// family when --timeout is not given (longest matching command path wins).
// DR commands fail fast: a half-dead region must not hold up the failover.
func commandTimeouts() map[string]time.Duration {
	return map[string]time.Duration{
		"dynops":             awsconfig.DefaultTimeout,
		"dynops dr":          10 * time.Second,
		"dynops check":       20 * time.Second,
		"dynops pitr status": 15 * time.Second,
		"dynops table diff":  time.Minute, // a 1 MB Scan page under throttling
		"dynops pitr repair": time.Minute,
	}
}

func commandTimeout(path string) time.Duration {
	best, bestLen := awsconfig.DefaultTimeout, 0
	for p, d := range commandTimeouts() {
		if (path == p || strings.HasPrefix(path, p+" ")) && len(p) > bestLen {
			best, bestLen = d, len(p)
		}
	}
	return best
}

// interruptedState says, per command family, in what state a Ctrl-C leaves
// things and how to continue (longest matching command path wins).
func interruptedState() map[string]string {
	const audit = "the audit log lists what was done"
	return map[string]string{
		"dynops":                    "nothing is left half-done by dynops itself; run the command again",
		"dynops pitr restore":       "a restore already started goes on in AWS (" + audit + "); check with `dynops pitr status`/`aws dynamodb describe-table`, then re-apply settings by running the restore again with another --target, or delete the new table",
		"dynops pitr repair":        "items written so far stay written (" + audit + "); run the same repair again: it writes only what still differs",
		"dynops table diff":         "nothing was changed and its temporary files were removed; run the diff again",
		"dynops export full":        "an export already started goes on in AWS; follow it with `dynops export list` and `dynops export wait ARN`",
		"dynops export wait":        "the export goes on in AWS; run `dynops export wait ARN` again",
		"dynops export import":      "an import already started goes on in AWS (" + audit + "); follow it with `aws dynamodb list-imports`, then check the table with `dynops check`",
		"dynops dlq redrive":        "messages replayed so far are deleted from the DLQ, the others become visible again after --visibility-timeout; run the redrive again",
		"dynops dlq move":           "a message move task goes on in SQS; messages being copied are in the source or both queues (at least once); run the move again",
		"dynops dr failover":        "the failover stopped between steps (" + audit + "); run `dynops dr status`, then the same failover again or the runbook's rollback",
		"dynops dr failback":        "the failback stopped between steps (" + audit + "); run `dynops dr status`, then the same failback again",
		"dynops dr drill":           "the drill stopped between steps (" + audit + "); run `dynops dr status` and delete any canary item it names",
		"dynops export verify":      "nothing was changed; run the verify again",
		"dynops dlq inspect":        "listed messages become visible again after --visibility-timeout; nothing was deleted",
		"dynops export status":      "nothing was changed",
		"dynops pitr status":        "nothing was changed",
		"dynops dr status":          "nothing was changed",
		"dynops check":              "nothing was changed",
		"dynops export list":        "nothing was changed",
		"dynops export incremental": "an export already started goes on in AWS; the next run continues from the checkpoint",
	}
}

func stateAfterInterrupt(path string) string {
	best, bestLen := "", 0
	for p, s := range interruptedState() {
		if (path == p || strings.HasPrefix(path, p+" ")) && len(p) > bestLen {
			best, bestLen = s, len(p)
		}
	}
	return best
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
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["audit"] = "skip"
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
		msg = fmt.Sprintf("interrupted: %s stopped while %s; %s", path, doing(err), stateAfterInterrupt(path))
	}
	// One JSON document on stdout: the error object, unless the command
	// already wrote its result (e.g. a report with the failures in it).
	if (f.JSON() || jsonAsked(args)) && !f.IOStreams.WroteJSON() {
		_ = f.IOStreams.PrintJSON(ErrorDoc{Error: ErrorBody{Message: msg, Code: kind, ExitCode: code}})
	}
	if code == exitcode.Interrupted {
		fmt.Fprintln(f.IOStreams.ErrOut, msg)
	} else {
		fmt.Fprintf(f.IOStreams.ErrOut, "error: %s\n", msg)
	}
	return code
}

// doing is what a command was doing when it was interrupted: its own
// context of the error, without the SDK's chain ("scanning T segment 1/4").
func doing(err error) string {
	msg := strings.TrimPrefix(err.Error(), "interrupted: ")
	for _, cut := range []string{": operation error ", ": context canceled", ": waiting for "} {
		if i := strings.Index(msg, cut); i > 0 {
			msg = msg[:i]
		}
	}
	if msg == "" || msg == "context canceled" {
		return "working"
	}
	return msg
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
