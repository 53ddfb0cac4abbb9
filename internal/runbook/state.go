package runbook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// State is the progress of one runbook in one incident: saved after every
// step, so a run that was interrupted resumes after the last finished step.
type State struct {
	Incident string            `json:"incident"`
	Runbook  string            `json:"runbook"`
	Started  string            `json:"started"`
	Params   map[string]string `json:"params"`
	Outputs  map[string]string `json:"outputs"`
	Done     []string          `json:"done"`              // finished step ids, in order
	Current  string            `json:"current,omitempty"` // the step running (or that stopped) last
	// Refused is the step whose last attempt was refused as bad input
	// (exit 2): by the project's rule it changed nothing.
	Refused string `json:"refused,omitempty"`
	// Changes are the parameters changed on resume, in order.
	Changes []ParamChange `json:"param_changes,omitempty"`
	// Decisions are the choices made at decision steps (step -> choice).
	Decisions map[string]string `json:"decisions,omitempty"`
	// Results are each finished step's full JSON output (a run on a
	// terminal shows one summary line per step).
	Results map[string]json.RawMessage `json:"results,omitempty"`
	// Approvals are the second-approver requests of destructive steps on
	// protected targets (step -> request), in the shared state.
	Approvals map[string]*Approval `json:"approvals,omitempty"`
	// Ended is how the last run of it ended (cleared when a run resumes
	// it): a terminal following a run in AWS reads it there.
	Ended   *Ended    `json:"ended,omitempty"`
	Updated time.Time `json:"updated"`
}

// Ended is how a run ended: the exit code of `dynops runbook run` and why.
type Ended struct {
	Code int       `json:"code"`
	Why  string    `json:"why"`
	By   string    `json:"by,omitempty"` // the caller that ran it (STS ARN)
	Host string    `json:"host,omitempty"`
	At   time.Time `json:"at"`
}

// ParamChange is a parameter given a new value on resume.
type ParamChange struct {
	Name string    `json:"name"`
	Old  string    `json:"old"`
	New  string    `json:"new"`
	At   time.Time `json:"at"`
}

// IsDone reports whether step id finished.
func (s *State) IsDone(id string) bool {
	for _, d := range s.Done {
		if d == id {
			return true
		}
	}
	return false
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Store keeps the states of runbook runs: FileStore (one laptop, the
// sandbox) or S3Store (a team's shared prefix, with a holder lease).
type Store interface {
	// Load returns the saved state, or nil when there is none.
	Load(ctx context.Context, incident, runbook string) (*State, error)
	// Save writes st; an S3Store refuses a state changed by another run.
	Save(ctx context.Context, st *State) error
	// WorkDir is the local private directory of a run ({{state_dir}}).
	WorkDir(incident, runbook string) (string, error)
	// Hold makes this process the holder of the run (or renews its hold);
	// a run held by another process returns a *HeldError.
	Hold(ctx context.Context, incident, runbook string) error
	// Release ends this process's hold (the run may be resumed by anyone).
	Release(ctx context.Context, incident, runbook string) error
	// Holder is the run's hold record, nil when there is none.
	Holder(ctx context.Context, incident, runbook string) (*Lease, error)
	// Runs lists the runbooks with a saved state for the incident.
	Runs(ctx context.Context, incident string) ([]string, error)
}

// FileStore keeps states in a directory (next to the audit log). One
// process on one machine: no lease (Hold and Release do nothing).
type FileStore struct{ Dir string }

// CheckIncident says whether id can name files: letters, digits, . _ -.
func CheckIncident(id string) error {
	if !safeName.MatchString(id) {
		return fmt.Errorf("incident id %q: use letters, digits, '.', '_' and '-' (at most 128), e.g. INC-1234", id)
	}
	return nil
}

func (s FileStore) path(incident, runbook string) string {
	return filepath.Join(s.Dir, incident+"."+runbook+".json")
}

// WorkDir is the private directory of an incident's runbook run ({{state_dir}}).
func (s FileStore) WorkDir(incident, runbook string) (string, error) {
	dir := filepath.Join(s.Dir, incident+"."+runbook+".d")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the runbook work directory %s: %w", dir, err)
	}
	return dir, nil
}

// Load returns the saved state, or nil when there is none.
func (s FileStore) Load(_ context.Context, incident, runbook string) (*State, error) {
	p := s.path(incident, runbook)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the runbook state %s: %w", p, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("runbook state %s is not valid JSON (%v): fix or remove it to start over", p, err)
	}
	return &st, nil
}

// Save writes st atomically (a temp file renamed over the old one), 0600.
func (s FileStore) Save(_ context.Context, st *State) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating the runbook state directory %s: %w", s.Dir, err)
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	p := s.path(st.Incident, st.Runbook)
	tmp, err := os.CreateTemp(s.Dir, ".state-*")
	if err != nil {
		return fmt.Errorf("saving the runbook state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the runbook state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the runbook state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the runbook state: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("saving the runbook state %s: %w", p, err)
	}
	return nil
}

// Hold does nothing: a local file has one user.
func (s FileStore) Hold(context.Context, string, string) error { return nil }

// Release does nothing.
func (s FileStore) Release(context.Context, string, string) error { return nil }

// Holder is nil: a local file has no lease.
func (s FileStore) Holder(context.Context, string, string) (*Lease, error) { return nil, nil }

// Runs lists the runbooks with a state file for the incident.
func (s FileStore) Runs(_ context.Context, incident string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(s.Dir, incident+".*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), incident+"."), ".json"))
	}
	sort.Strings(out)
	return out, nil
}
