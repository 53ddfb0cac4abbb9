// Package exitcode holds the documented process exit codes of dynops, so
// scripts and pagers can act on them (docs/exit-codes.md).
package exitcode

// Exit codes.
const (
	OK = 0
	// Failure: the command failed, or `dynops check` found failing rules, or
	// an AWS job (export, import, restore) ended FAILED.
	Failure = 1
	// Usage: bad input (unknown command or flag, bad flag value, a target
	// that does not fit); nothing was changed.
	Usage = 2
	// Critical: `dlq inspect` found messages with less than --critical left
	// before their records leave the stream.
	Critical = 3
	// Lost: `dlq inspect` found messages whose records already left the
	// stream, or that dynops cannot read.
	Lost = 4
	// Stopped: `runbook run` stopped before its last step on purpose
	// (--until, --through, or a step that changes things run without
	// --yes): nothing failed; the same command without them goes on.
	Stopped = 5
	// Timeout: an AWS endpoint did not answer within --timeout, or a wait
	// passed --wait-timeout (the AWS job may still go on).
	Timeout = 124
	// Interrupted: Ctrl-C (SIGINT) or SIGTERM.
	Interrupted = 130
)
