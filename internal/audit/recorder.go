package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// Caller is the AWS identity a run acts as (STS GetCallerIdentity).
type Caller struct {
	ARN     string
	Account string
}

// Sink receives a copy of every record after it is in the local log (the
// central CloudWatch Logs copy).
type Sink interface {
	Put(ctx context.Context, rec Record) error
	Name() string
}

// Options configure a Recorder.
type Options struct {
	Path string
	Now  func() time.Time
	// ClearKeys writes key values in clear (--audit-clear-keys); by default
	// they are hashed wherever a record carries them: key fields of action
	// details, DynamoDB JSON values in error texts and findings.
	ClearKeys bool
	Sink      Sink // optional central copy
	Identity  Identity
	Tags      Tags
	// Caller resolves the AWS caller (called at most once per run). Nil:
	// the caller stays unknown.
	Caller func(ctx context.Context) (Caller, error)
}

// Recorder collects one command run and writes its `started` and `finished`
// records. Safe for concurrent use.
type Recorder struct {
	o     Options
	runID string
	start time.Time

	mu        sync.Mutex
	command   string
	params    map[string]string
	targets   []string
	plan      *Plan
	started   bool
	callerErr error
	callerOK  bool
	actions   []Action
	counts    map[string]int64
	findings  []string
	log       *logFile
}

// New returns the recorder of one run.
func New(o Options) *Recorder {
	if o.Now == nil {
		o.Now = time.Now
	}
	id := o.Identity
	if id.Host == "" {
		id.Host, _ = os.Hostname()
	}
	if id.OSUser == "" {
		if u, err := user.Current(); err == nil {
			id.OSUser = u.Username
		}
	}
	if id.PID == 0 {
		id.PID = os.Getpid()
	}
	if id.Commit == "" {
		id.Commit = buildCommit()
	}
	o.Identity = id
	return &Recorder{o: o, runID: newRunID(), start: o.Now().UTC(), counts: map[string]int64{}}
}

// NewRecorder returns a recorder that appends to path (tests, tools).
func NewRecorder(path string, now func() time.Time) *Recorder {
	return New(Options{Path: path, Now: now})
}

func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// buildCommit is the VCS revision the binary was built from, with "-dirty"
// when the tree had changes; "" when the build has no VCS stamp.
func buildCommit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return commitOf(bi.Settings)
}

// commitOf reads the VCS stamp of a build's settings.
func commitOf(settings []debug.BuildSetting) string {
	var rev, dirty string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// Path is where records go.
func (r *Recorder) Path() string { return r.o.Path }

// RunID identifies this run's two records.
func (r *Recorder) RunID() string { return r.runID }

// Tags are the incident and runbook step of this run.
func (r *Recorder) Tags() Tags {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.o.Tags
}

// SetTags replaces the run's incident and runbook tags (before Start).
func (r *Recorder) SetTags(t Tags) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Tags = t
}

// SetCommand names the command run, its flags and its targets.
func (r *Recorder) SetCommand(command string, params map[string]string, targets []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.command, r.params, r.targets = command, params, targets
}

// AddRegion notes a region the run works in (besides the configured one).
func (r *Recorder) AddRegion(region string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.o.Identity.Regions {
		if x == region {
			return
		}
	}
	if region != "" {
		r.o.Identity.Regions = append(r.o.Identity.Regions, region)
	}
}

// Act notes one change made (or planned, in a dry run).
func (r *Recorder) Act(what, target string, detail any) {
	a := Action{Time: r.o.Now().UTC(), What: what, Target: target, Detail: sanitize(detail, !r.o.ClearKeys)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, a)
}

// Actions returns the actions noted so far.
func (r *Recorder) Actions() []Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Action(nil), r.actions...)
}

// Count sets a result count of the run (items copied, conflicts, messages
// replayed and kept, differences, failing rules).
func (r *Recorder) Count(name string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[name] = n
}

// Counts adds several result counts.
func (r *Recorder) Counts(m map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range m {
		r.counts[k] = v
	}
}

// Finding notes one finding of a read-only command (e.g. a failing rule).
func (r *Recorder) Finding(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings = append(r.findings, s)
}

// Caller returns the AWS caller's ARN and account, resolved by Start (empty
// before Start, or when it could not be resolved).
func (r *Recorder) Caller() (arn, account string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.o.Identity.CallerARN, r.o.Identity.Account
}

// Started reports whether the `started` record is written.
func (r *Recorder) Started() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// ErrNotAudited wraps every reason Start refuses: the command must not act.
var ErrNotAudited = errors.New("audit record not written: nothing was changed")

// Start writes the `started` record: the gate every command that changes
// something passes right before its first write. It resolves the AWS caller
// (which must succeed), appends the record to the local log and, when
// configured, to the central copy. An error means the command must not act.
// Calling it again is a no-op.
func (r *Recorder) Start(ctx context.Context, plan Plan) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return nil
	}
	r.plan = &plan
	r.mu.Unlock()
	r.resolveCaller(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.callerErr != nil {
		return fmt.Errorf("%w: the AWS caller is unknown (%v)", ErrNotAudited, r.callerErr)
	}
	rec := r.base(EventStarted, r.start)
	rec.Plan = r.plan
	if len(plan.Targets) > 0 {
		rec.Targets = plan.Targets
	}
	local, central := r.write(ctx, rec)
	if local != nil {
		return fmt.Errorf("%w: %v", ErrNotAudited, local)
	}
	r.started = true // its `finished` follows, whatever happens next
	if central != nil {
		return fmt.Errorf("%w: %v", ErrNotAudited, central)
	}
	return nil
}

// Outcome is how a run ended.
type Outcome struct {
	ExitCode int
	DryRun   bool
	Refused  bool  // bad input or no confirmation
	Stopped  bool  // stopped on purpose before its end (exit 5)
	Err      error // the error that stopped it (nil for an exit code the command chose)
}

// Finish writes the `finished` record (and, for a run that never called
// Start, its late `started` record first: read-only commands and dry runs).
// The caller and the central copy are best effort here.
func (r *Recorder) Finish(ctx context.Context, out Outcome) error {
	r.resolveCaller(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if !r.started {
		rec := r.base(EventStarted, r.start)
		rec.Late = true
		rec.DryRun = out.DryRun
		local, central := r.write(ctx, rec)
		errs = append(errs, local, central)
		r.started = local == nil
	}
	now := r.o.Now().UTC()
	rec := r.base(EventFinished, now)
	rec.DryRun = out.DryRun
	code := out.ExitCode
	rec.ExitCode = &code
	d := now.Sub(r.start).Milliseconds()
	rec.DurationMS = &d
	rec.Result = resultOf(out)
	if out.Err != nil {
		rec.Error = out.Err.Error()
		if !r.o.ClearKeys {
			rec.Error = HashKeysIn(rec.Error)
		}
	}
	if len(r.counts) > 0 {
		rec.Counts = r.counts
	}
	rec.Findings = r.findings
	if !r.o.ClearKeys {
		rec.Findings = make([]string, len(r.findings))
		for i, s := range r.findings {
			rec.Findings[i] = HashKeysIn(s)
		}
	}
	rec.Actions = r.actions
	local, central := r.write(ctx, rec)
	errs = append(errs, local, central)
	if r.log != nil {
		if err := r.log.close(); err != nil {
			errs = append(errs, err)
		}
		r.log = nil
	}
	return joinUnique(errs)
}

// joinUnique joins the errors, each message once.
func joinUnique(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if e != nil && !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

func resultOf(o Outcome) string {
	switch {
	case o.Refused:
		return ResultRefused
	case o.Stopped:
		return ResultStopped
	case o.ExitCode == 0 && o.DryRun:
		return ResultDryRun
	case o.ExitCode == 0:
		return ResultOK
	case o.Err == nil:
		return ResultFindings
	default:
		return ResultFailed
	}
}

// SkipCaller records why the run's AWS identity was not looked up (a
// command line refused before any AWS call: answering it must not wait on
// STS), so that Finish does not look it up.
func (r *Recorder) SkipCaller(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.callerOK || r.callerErr != nil {
		return
	}
	r.callerErr = errors.New(reason)
	r.o.Identity.CallerError = reason
}

func (r *Recorder) resolveCaller(ctx context.Context) {
	r.mu.Lock()
	done := r.callerOK || r.callerErr != nil
	r.mu.Unlock()
	if done {
		return
	}
	var c Caller
	err := errors.New("no AWS configuration")
	if r.o.Caller != nil {
		c, err = r.o.Caller(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.callerErr = err
		r.o.Identity.CallerError = err.Error()
		return
	}
	r.callerOK = true
	r.o.Identity.CallerARN, r.o.Identity.Account = c.ARN, c.Account
}

// base is a record with what every record of the run carries. r.mu is held.
func (r *Recorder) base(event string, t time.Time) Record {
	id := r.o.Identity
	id.Regions = append([]string(nil), id.Regions...)
	sort.Strings(id.Regions)
	return Record{Time: t, Event: event, RunID: r.runID, Identity: id, Tags: r.o.Tags,
		Command: r.command, Params: r.params, Targets: r.targets}
}

// write appends rec to the local log (opened on the first record and kept
// open for the second), then copies it to the sink. r.mu is held.
func (r *Recorder) write(ctx context.Context, rec Record) (local, central error) {
	if r.log == nil {
		var err error
		if r.log, err = openLog(r.o.Path); err != nil {
			return err, nil
		}
	}
	rec, err := r.log.append(rec)
	if err != nil {
		return err, nil
	}
	if r.o.Sink != nil {
		if err := r.o.Sink.Put(ctx, rec); err != nil {
			return nil, fmt.Errorf("central audit copy to %s: %w", r.o.Sink.Name(), err)
		}
	}
	return nil, nil
}

// DefaultPath is $XDG_STATE_HOME/dynops/audit.jsonl, or ~/.local/state/dynops/audit.jsonl.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the audit log directory: %w (pass --audit-log)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "dynops", "audit.jsonl"), nil
}
