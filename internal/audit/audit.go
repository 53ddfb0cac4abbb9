// Package audit appends one JSON line per dynops action to an audit log: who
// ran what, when, with which parameters, what it changed and how it ended.
package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"time"
)

// Record is one line of the audit log.
type Record struct {
	Time     time.Time         `json:"time"`
	User     string            `json:"user"`
	Identity string            `json:"aws_identity,omitempty"`
	Command  string            `json:"command"`
	Params   map[string]string `json:"params,omitempty"`
	DryRun   bool              `json:"dry_run"`
	Result   string            `json:"result"` // ok, failed, dry-run
	Error    string            `json:"error,omitempty"`
	Actions  []Action          `json:"actions,omitempty"`
}

// Action is one change (or one planned change, in a dry run) a command made.
type Action struct {
	Time   time.Time `json:"time"`
	What   string    `json:"what"`
	Target string    `json:"target,omitempty"`
	Detail any       `json:"detail,omitempty"`
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

// Recorder collects the actions of one command run and appends its record once.
type Recorder struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	actions []Action
}

// NewRecorder returns a recorder that appends to path.
func NewRecorder(path string, now func() time.Time) *Recorder {
	return &Recorder{path: path, now: now}
}

// Path is where records go.
func (r *Recorder) Path() string { return r.path }

// Act notes one change made (or planned, in a dry run). Safe for concurrent use.
func (r *Recorder) Act(what, target string, detail any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, Action{Time: r.now().UTC(), What: what, Target: target, Detail: detail})
}

// Actions returns the actions noted so far.
func (r *Recorder) Actions() []Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Action(nil), r.actions...)
}

// Write appends rec, with the actions noted so far, as one JSON line.
func (r *Recorder) Write(rec Record) error {
	rec.Time = r.now().UTC()
	if rec.User == "" {
		if u, err := user.Current(); err == nil {
			rec.User = u.Username
		}
	}
	rec.Actions = r.Actions()
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("creating audit log directory: %w", err)
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening audit log %s: %w", r.path, err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing audit log %s: %w", r.path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing audit log %s: %w", r.path, err)
	}
	return f.Close()
}

// Read returns every record in the log at path (for tests and `dynops audit`).
func Read(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	var recs []Record
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			return recs, fmt.Errorf("audit log %s record %d: %w", path, len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
