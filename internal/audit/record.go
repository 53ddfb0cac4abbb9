// Package audit keeps the incident-grade audit trail of dynops: two JSON
// lines per command run, `started` before the first write and `finished`
// when the run ends, sharing a run id, each naming who ran what (AWS caller,
// account, regions, profile, endpoint, dynops version, host, OS user,
// incident), and the results as data. It reads the trail back as runs and
// renders an incident timeline.
package audit

import (
	"time"
)

// Events of a record.
const (
	EventStarted  = "started"
	EventFinished = "finished"
)

// Results of a finished run.
const (
	ResultOK       = "ok"       // exit 0, changes (if any) made
	ResultDryRun   = "dry-run"  // exit 0, nothing changed on purpose
	ResultFindings = "findings" // the command ran and reported something to act on (conflicts, messages kept, failing checks); exit 1
	ResultFailed   = "failed"   // an error stopped the command
	ResultRefused  = "refused"  // bad input or no confirmation: nothing changed
	ResultStopped  = "stopped"  // stopped on purpose before its end (runbook run --until/--through, or before an unconfirmed step); exit 5
	// ResultInterrupted is never written: it is what a `started` record
	// without its `finished` reads back as (a kill, a crash, a power cut).
	ResultInterrupted = "interrupted"
)

// Identity says who ran a command, where and with what.
type Identity struct {
	CallerARN   string   `json:"caller_arn,omitempty"`
	Account     string   `json:"account,omitempty"`
	CallerError string   `json:"caller_error,omitempty"` // why the caller is unknown (read-only runs go on without it)
	Regions     []string `json:"regions,omitempty"`
	Profile     string   `json:"profile,omitempty"`
	Endpoint    string   `json:"endpoint,omitempty"`
	Version     string   `json:"version,omitempty"`
	Commit      string   `json:"commit,omitempty"`
	Host        string   `json:"host,omitempty"`
	OSUser      string   `json:"os_user,omitempty"`
	PID         int      `json:"pid,omitempty"`
}

// Tags tie a run to an incident and, inside `dynops runbook run`, to a
// runbook step.
type Tags struct {
	Incident  string `json:"incident,omitempty"`
	Runbook   string `json:"runbook,omitempty"`
	Step      string `json:"step,omitempty"`
	ParentRun string `json:"parent_run,omitempty"`
}

// Plan is what a command is about to do, written in its `started` record.
type Plan struct {
	Targets []string         `json:"targets,omitempty"`
	Counts  map[string]int64 `json:"counts,omitempty"`
}

// Record is one line of the audit log.
type Record struct {
	// Prev is the SHA-256 of the line before this one in the local log
	// (chain.go); "" on a file's first line.
	Prev     string    `json:"prev"`
	Time     time.Time `json:"time"`
	Event    string    `json:"event"` // started or finished
	RunID    string    `json:"run_id"`
	Identity Identity  `json:"identity"`
	Tags
	Command string            `json:"command"`
	Params  map[string]string `json:"params,omitempty"`
	Targets []string          `json:"targets,omitempty"`
	DryRun  bool              `json:"dry_run"`

	// started
	Plan *Plan `json:"plan,omitempty"`
	// Late is set on a `started` record written only when the run ended:
	// read-only commands and dry runs, which write nothing.
	Late bool `json:"late,omitempty"`

	// finished
	Result     string           `json:"result,omitempty"`
	ExitCode   *int             `json:"exit_code,omitempty"`
	DurationMS *int64           `json:"duration_ms,omitempty"`
	Counts     map[string]int64 `json:"counts,omitempty"`
	Findings   []string         `json:"findings,omitempty"`
	Error      string           `json:"error,omitempty"`
	Actions    []Action         `json:"actions,omitempty"`
}

// Action is one change (or one planned change, in a dry run) a command made.
type Action struct {
	Time   time.Time `json:"time"`
	What   string    `json:"what"`
	Target string    `json:"target,omitempty"`
	Detail any       `json:"detail,omitempty"`
}
